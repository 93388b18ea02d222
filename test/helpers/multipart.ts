/** Multipart bodies, built by hand so every header of a part is under the test's control. */
export type Part = { name: string; value: string } | { name: string; filename: string; contentType?: string | null; data: string | Buffer };

export function multipart(parts: Part[]) {
  const boundary = `----lmsTestBoundary${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if ('filename' in p) {
      head += `; filename="${p.filename}"\r\n`;
      if (p.contentType !== null) head += `Content-Type: ${p.contentType ?? 'text/vtt'}\r\n`;
      head += '\r\n';
      chunks.push(Buffer.from(head), Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data), Buffer.from('\r\n'));
    } else {
      chunks.push(Buffer.from(`${head}\r\n\r\n${p.value}\r\n`));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
