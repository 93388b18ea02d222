/**
 * Report files: CSV (csv-stringify), XLSX (exceljs's streaming WorkbookWriter) and PDF (pdfkit),
 * each written as a stream from batches of rows, so a 100,000-row export never sits in memory.
 * Libraries are loaded on first use, as certificates load pdfkit.
 *
 * Formula injection: a text cell beginning with `=`, `+`, `-`, `@`, a tab or a carriage return
 * is written with a leading `'`, so a spreadsheet shows it as text instead of running it
 * (OWASP "CSV injection"). Numbers, booleans and timestamps are the service's own values and are
 * written as they are: in a CSV timestamps are the API's ISO 8601 UTC text; in an XLSX they (and
 * the day buckets of grouped reports) are date cells, shown in UTC.
 */
import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import type { ExportFormat } from './analytics.tables.js';
import type { OutputColumn } from './analytics.definition.js';
import type { ReportRow } from './analytics.compiler.js';

const FORMULA_START = /^[=+\-@\t\r]/;

/** A text value a spreadsheet could take for a formula, made inert. */
export const neutralize = (value: string) => (FORMULA_START.test(value) ? `'${value}` : value);

/** Spreadsheet number formats of the XLSX date columns: timestamps (UTC, as the API gives them) and day buckets. */
const XLSX_DATE_FORMATS: Partial<Record<OutputColumn['type'], string>> = { timestamp: 'yyyy-mm-dd hh:mm:ss.000', date: 'yyyy-mm-dd' };

/** A cell's value; `dates`: timestamps and day buckets as Date values (XLSX), else as their ISO text. */
const cell = (c: OutputColumn, v: ReportRow[string], dates = false): string | number | boolean | Date | null => {
  if (v === null) return null;
  if (dates && XLSX_DATE_FORMATS[c.type] && typeof v === 'string') return new Date(v.length === 10 ? `${v}T00:00:00Z` : v);
  const textual = c.type === 'string' || c.type === 'enum';
  return textual && typeof v === 'string' ? neutralize(v) : v;
};

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  CSV: 'text/csv; charset=utf-8',
  XLSX: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  PDF: 'application/pdf',
};
export const EXTENSIONS: Record<ExportFormat, string> = { CSV: 'csv', XLSX: 'xlsx', PDF: 'pdf' };

export interface ExportMeta {
  title: string;
  /** When the file was made (shown in the PDF heading). */
  generatedAt: Date;
}

/** A file name for `Content-Disposition` and attachments: the title in safe characters, the date, the extension. */
export function exportFileName(title: string, format: ExportFormat, at: Date): string {
  const base =
    title
      .normalize('NFKD')
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '')
      .slice(0, 80) || 'report';
  return `${base}-${at.toISOString().slice(0, 10)}.${EXTENSIONS[format]}`;
}

/** `Content-Disposition: attachment` with the name (RFC 6266; ASCII already, so no `filename*` is needed). */
export const contentDisposition = (fileName: string) => `attachment; filename="${fileName.replace(/["\\\r\n]/g, '_')}"`;

export interface ExportFile {
  stream: Readable;
  contentType: string;
  /** Rows written so far (final once the stream has ended). */
  rowCount: () => number;
}

/**
 * The file of a report as a stream. Rows come from `batches`; a failure while reading them
 * destroys the stream with that error (an HTTP response is cut off, a stored file is not kept).
 */
export function exportReport(format: ExportFormat, columns: OutputColumn[], batches: AsyncIterable<ReportRow[]>, meta: ExportMeta): ExportFile {
  let rows = 0;
  const out = new PassThrough();
  // A reader that goes away (or a failure) stops the writer and, through the loop, the query.
  const stop = new AbortController();
  out.once('close', () => stop.abort());
  const counted = async function* () {
    for await (const batch of batches) {
      stop.signal.throwIfAborted();
      rows += batch.length;
      yield batch;
    }
  };
  const write = format === 'CSV' ? writeCsv : format === 'XLSX' ? writeXlsx : writePdf;
  write(out, columns, counted(), meta, stop.signal).catch((err: unknown) => out.destroy(err as Error));
  return { stream: out, contentType: CONTENT_TYPES[format], rowCount: () => rows };
}

type Writer = (out: PassThrough, columns: OutputColumn[], batches: AsyncIterable<ReportRow[]>, meta: ExportMeta, signal: AbortSignal) => Promise<void>;

const writeCsv: Writer = async (out, columns, batches, _meta, signal) => {
  const { stringify } = await import('csv-stringify');
  const stringifier = stringify({ header: true, columns: columns.map((c) => ({ key: c.key, header: neutralize(c.label) })), cast: { boolean: (b) => (b ? 'true' : 'false') } });
  stringifier.on('error', (err) => out.destroy(err));
  stringifier.pipe(out);
  for await (const batch of batches) {
    for (const r of batch) {
      const record: Record<string, unknown> = {};
      for (const c of columns) record[c.key] = cell(c, r[c.key] ?? null);
      if (!stringifier.write(record)) await once(stringifier, 'drain', { signal });
    }
  }
  stringifier.end();
};

const writeXlsx: Writer = async (out, columns, batches, _meta, signal) => {
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
  const sheet = workbook.addWorksheet('Report');
  sheet.columns = columns.map((c) => {
    const numFmt = XLSX_DATE_FORMATS[c.type];
    return {
      header: neutralize(c.label),
      key: c.key,
      width: Math.max(numFmt ? numFmt.length + 2 : 12, Math.min(40, c.label.length + 2)),
      ...(numFmt ? { style: { numFmt } } : {}),
    };
  });
  sheet.getRow(1).font = { bold: true };
  sheet.getRow(1).commit();
  for await (const batch of batches) {
    for (const r of batch) {
      const values: Record<string, unknown> = {};
      for (const c of columns) values[c.key] = cell(c, r[c.key] ?? null, true);
      sheet.addRow(values).commit();
    }
    // Wait for the reader between batches, so a slow client holds back the database, not memory.
    if (out.writableNeedDrain) await once(out, 'drain', { signal });
  }
  sheet.commit();
  await workbook.commit();
};

/** Most bytes the PDF document may hold ahead of its reader. */
const PDF_BUFFER_LIMIT = 1 << 20;

const writePdf: Writer = async (out, columns, batches, meta, signal) => {
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({ size: 'A4', layout: 'landscape', margin: 36, info: { Title: meta.title }, bufferPages: false });
  doc.on('error', (err: Error) => out.destroy(err));
  doc.pipe(out);
  const left = doc.page.margins.left;
  const width = doc.page.width - left - doc.page.margins.right;
  const colWidth = width / Math.max(1, columns.length);
  const bottom = () => doc.page.height - doc.page.margins.bottom;
  const rowHeight = 14;

  const line = (values: string[], bold: boolean) => {
    if (doc.y + rowHeight > bottom()) {
      doc.addPage();
      header();
    }
    const y = doc.y;
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(8);
    values.forEach((v, i) => doc.text(v, left + i * colWidth, y, { width: colWidth - 4, height: rowHeight - 2, ellipsis: true }));
    doc.x = left;
    doc.y = y + rowHeight;
  };
  const labels = columns.map((c) => c.label);
  const header = () => line(labels, true);

  doc.font('Helvetica-Bold').fontSize(14).text(meta.title, left, doc.y);
  doc.font('Helvetica').fontSize(9).text(`Generated ${meta.generatedAt.toISOString()}`);
  doc.moveDown(0.5);
  header();
  for await (const batch of batches) {
    for (const r of batch)
      line(
        columns.map((c) => text(r[c.key] ?? null)),
        false,
      );
    // The document is piped: let it flow, and wait while the reader is behind.
    if (out.writableNeedDrain) await once(out, 'drain', { signal });
    else if (doc.readableLength > PDF_BUFFER_LIMIT) await new Promise((resolve) => setImmediate(resolve));
  }
  doc.end();
};

const text = (v: ReportRow[string]) => (v === null ? '' : String(v));
