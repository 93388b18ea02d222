import { resolve } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { storeEml } from '../platform/mail/mailbox.js';

/**
 * A development SMTP server that delivers nowhere: every message it accepts is stored as
 * `<dir>/<timestamp>-<n>.eml`. `lms start` runs one on loopback when `SMTP_URL` is unset, so
 * the worker speaks real SMTP and the mail can be opened in any mail reader. No
 * authentication, no TLS: it listens on loopback only.
 */

export interface SmtpSinkOptions {
  dir: string;
  /** 0 (the default): any free port. */
  port?: number;
  /** A loopback address; anything else is refused. */
  host?: string;
  /** Largest message accepted (SIZE extension; a bigger one is refused with 552). */
  maxBytes?: number;
}

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>`, ready for `SMTP_URL`. */
  url: string;
  port: number;
  /** Absolute path of the directory the messages go to. */
  dir: string;
  close(): Promise<void>;
}

const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;

export async function startSmtpSink(opts: SmtpSinkOptions): Promise<SmtpSink> {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopback(host)) throw new Error(`the SMTP sink listens on loopback only, not ${host}`);
  const dir = resolve(opts.dir);
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: opts.maxBytes ?? DEFAULT_MAX_BYTES,
    rejectOversized: true,
    banner: 'LMS development SMTP sink (mail is stored, never delivered)',
    logger: false,
    // Shutdown does not wait for a client's idle pooled connection.
    closeTimeout: 500,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        // Over the size limit: store nothing (with rejectOversized the server answers 552 itself).
        if (stream.sizeExceeded) return callback(Object.assign(new Error('message exceeds the size limit'), { responseCode: 552 }));
        storeEml(dir, Buffer.concat(chunks)).then(
          () => callback(),
          (err: Error) => callback(Object.assign(new Error(`could not store the message: ${err.message}`), { responseCode: 451 })),
        );
      });
    },
  });
  // A client's connection error (reset, timeout) is emitted here; it is the client's problem, not the sink's.
  let startError: ((err: Error) => void) | undefined;
  server.on('error', (err) => startError?.(err));
  await new Promise<void>((ok, fail) => {
    startError = fail;
    server.listen(opts.port ?? 0, host, () => ok());
  });
  startError = undefined;
  const { port } = server.server.address() as { port: number };
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `smtp://${urlHost}:${port}`,
    port,
    dir,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
