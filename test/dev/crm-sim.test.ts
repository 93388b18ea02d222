import { request as httpRequest } from 'node:http';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CRM_SIM_CONTROL_PATH, startCrmSim, type CrmSim } from '../../src/dev/crm-sim/server.js';
import { runCrmSimCli } from '../../src/dev/crm-sim/main.js';
import {
  attendanceSchema,
  childSchema,
  classSchema,
  contactSchema,
  feeStatusSchema,
  parentLinkSchema,
  rosterEntrySchema,
  staffUserSchema,
  studentSchema,
} from '../../src/platform/crm/types.js';
import {
  CRM_YEAR_ID,
  DEMO_ADMIN_ID,
  DEMO_INSTITUTION,
  DEMO_PARENT_ID,
  DEMO_SECOND_GUARDIAN_ID,
  DEMO_SECTION_ID,
  DEMO_SIBLING_ID,
  DEMO_STUDENT_ID,
  DEMO_TEACHER_ID,
  DEMO_UNRELATED_STUDENT_ID,
  NORTH_STUDENT_ID,
  OVERDUE_STUDENT_ID,
  PAID_STUDENT_ID,
  PARTIAL_STUDENT_ID,
  SECOND_INSTITUTION,
  crmFixtures,
  demoFixtures,
} from '../../src/dev/crm-sim/fixtures.js';

let sim: CrmSim;
const KEY = 'sim-test-key';

beforeAll(async () => {
  sim = await startCrmSim({ port: 0, apiKey: KEY });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.setFault(null);
  sim.resetRecords();
});

interface RawResponse {
  status: number;
  text: string;
  json: any;
}

/** A raw HTTP exchange with an explicit Host header, so tenant routing is tested as the CRM sees it. */
function call(path: string, opts: { host?: string; method?: string; key?: string | null; body?: unknown; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  const host = opts.host === undefined ? `demo.${sim.baseDomain}` : opts.host;
  const key = opts.key === undefined ? KEY : opts.key;
  const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: sim.port,
        path,
        method: opts.method ?? 'GET',
        setHost: false,
        agent: false,
        headers: {
          host,
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('host-based tenant routing', () => {
  it('the base domain is <name>.localhost with the port', () => {
    expect(sim.baseDomain).toBe(`crm.localhost:${sim.port}`);
    expect(sim.protocol).toBe('http');
    expect(sim.apiKey).toBe(KEY);
  });

  it('<slug>.<baseDomain> selects the institution', async () => {
    const demo = await call(`/api/lms/contact/${DEMO_STUDENT_ID}`);
    expect(demo.status).toBe(200);
    expect(demo.json).toEqual({ data: demoFixtures.students[0].contact, error: null });

    const north = await call(`/api/lms/contact/${NORTH_STUDENT_ID}`, { host: `northside.${sim.baseDomain}` });
    expect(north.status).toBe(200);
    expect(north.json.data.id).toBe(NORTH_STUDENT_ID);
    // And not across tenants.
    expect((await call(`/api/lms/contact/${NORTH_STUDENT_ID}`)).status).toBe(404);
  });

  it('the bare domain answers 404 to /api/lms/*', async () => {
    const res = await call(`/api/lms/contact/${DEMO_STUDENT_ID}`, { host: sim.baseDomain });
    expect(res.status).toBe(404);
    expect((await call('/', { host: sim.baseDomain })).status).toBe(404);
  });

  it('the bare domain answers the institution lookup, unauthenticated and without envelope', async () => {
    const res = await call(`/api/portal/institutions/${SECOND_INSTITUTION.id}`, { host: sim.baseDomain, key: null });
    expect(res.status).toBe(200);
    expect(res.json).toEqual(SECOND_INSTITUTION);
    expect((await call('/api/portal/institutions/inst_missing', { host: sim.baseDomain, key: null })).status).toBe(404);
    // Only on the bare domain.
    expect((await call(`/api/portal/institutions/${DEMO_INSTITUTION.id}`)).status).toBe(404);
  });

  it('an unknown slug, a nested label or a foreign domain is 404', async () => {
    for (const host of [`nosuch.${sim.baseDomain}`, `a.demo.${sim.baseDomain}`, 'demo.example.com', '']) {
      const res = await call(`/api/lms/contact/${DEMO_STUDENT_ID}`, { host });
      expect(res.status, host).toBe(404);
      expect(res.json?.data ?? null).toBeNull();
    }
  });
});

describe('authentication of /api/lms/*', () => {
  it('401 in the envelope without the bearer key or with a wrong one', async () => {
    for (const key of [null, 'wrong', `${KEY}x`]) {
      const res = await call(`/api/lms/contact/${DEMO_STUDENT_ID}`, { key });
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ data: null, error: { code: 'AUTH_REQUIRED', message: expect.any(String) } });
    }
    const basic = await call(`/api/lms/contact/${DEMO_STUDENT_ID}`, { key: null, headers: { authorization: `Basic ${KEY}` } });
    expect(basic.status).toBe(401);
  });

  it('a slug header that contradicts the host is refused', async () => {
    const res = await call(`/api/lms/contact/${DEMO_STUDENT_ID}`, { headers: { 'x-institution-slug': 'northside' } });
    expect(res.status).toBe(400);
    expect((await call(`/api/lms/contact/${DEMO_STUDENT_ID}`, { headers: { 'x-institution-slug': 'demo' } })).status).toBe(200);
  });
});

describe('spec 4.10 endpoints in the envelope', () => {
  const data = async (path: string) => {
    const res = await call(path);
    expect(res.status, path).toBe(200);
    expect(res.json.error).toBeNull();
    return res.json.data;
  };

  it('contact: students and parents', async () => {
    expect(contactSchema.parse(await data(`/api/lms/contact/${DEMO_STUDENT_ID}`)).contactType).toBe('CONTACT_STUDENT');
    expect(contactSchema.parse(await data(`/api/lms/contact/${DEMO_PARENT_ID}`)).contactType).toBe('CONTACT_PARENT');
  });

  it('student: keyed by Contact id, with class and section', async () => {
    const student = studentSchema.parse(await data(`/api/lms/student/${DEMO_STUDENT_ID}`));
    expect(student.contactId).toBe(DEMO_STUDENT_ID);
    expect(student.id).not.toBe(DEMO_STUDENT_ID);
    expect(student.currentEnrolment).toMatchObject({ className: 'Grade 6', sectionId: DEMO_SECTION_ID, sectionName: 'A' });
    // The student record id is not the key.
    expect((await call(`/api/lms/student/${student.id}`)).status).toBe(404);
  });

  it('student parents: primary first', async () => {
    const parents = parentLinkSchema.array().parse(await data(`/api/lms/student/${DEMO_STUDENT_ID}/parents`));
    expect(parents.map((p) => [p.parentContactId, p.isPrimary])).toEqual([
      [DEMO_PARENT_ID, true],
      [DEMO_SECOND_GUARDIAN_ID, false],
    ]);
  });

  it('user: staff', async () => {
    expect(staffUserSchema.parse(await data(`/api/lms/user/${DEMO_ADMIN_ID}`)).role).toBe('ADMIN');
    expect(staffUserSchema.parse(await data(`/api/lms/user/${DEMO_TEACHER_ID}`)).role).toBe('TEACHER');
    // Contacts are not users.
    expect((await call(`/api/lms/user/${DEMO_STUDENT_ID}`)).status).toBe(404);
  });

  it('classes, filtered by yearId', async () => {
    const classes = classSchema.array().parse(await data(`/api/lms/classes?yearId=${CRM_YEAR_ID}`));
    expect(classes.map((c) => c.name)).toEqual(['Grade 6', 'Grade 7', 'Grade 8']);
    expect(classes.every((c) => c.sections.length === 2)).toBe(true);
    expect(await data('/api/lms/classes?yearId=1999')).toEqual([]);
    expect((await data('/api/lms/classes')).length).toBe(3);
  });

  it('section roster', async () => {
    const roster = rosterEntrySchema.array().parse(await data(`/api/lms/sections/${DEMO_SECTION_ID}/students`));
    expect(roster).toHaveLength(5);
    expect(roster[0]).toMatchObject({ studentContactId: DEMO_STUDENT_ID, rollNumber: 1 });
    expect((await call('/api/lms/sections/sec_nope/students')).status).toBe(404);
  });

  it('fee status: all three kinds, by Contact id or student record id', async () => {
    expect(feeStatusSchema.parse(await data(`/api/lms/students/${PAID_STUDENT_ID}/fee-status`))).toEqual({
      status: 'PAID',
      outstanding: 0,
      dueDate: null,
    });
    expect((await data(`/api/lms/students/${PARTIAL_STUDENT_ID}/fee-status`)).status).toBe('PARTIAL');
    const overdue = feeStatusSchema.parse(await data(`/api/lms/students/${OVERDUE_STUDENT_ID}/fee-status`));
    expect(overdue.status).toBe('OVERDUE');
    expect(overdue.outstanding).toBeGreaterThan(0);
    const recordId = demoFixtures.students[2].student.id;
    expect((await data(`/api/lms/students/${recordId}/fee-status`)).status).toBe('OVERDUE');
  });

  it('attendance: weekdays of the range, deterministic, dates validated', async () => {
    const path = `/api/lms/students/${DEMO_STUDENT_ID}/attendance?from=2026-02-01&to=2026-02-28`;
    const feed = attendanceSchema.parse(await data(path));
    expect(feed.records).toHaveLength(20);
    expect(feed.records.every((r) => ![0, 6].includes(new Date(`${r.date}T00:00:00Z`).getUTCDay()))).toBe(true);
    const s = feed.summary;
    expect(s.present + s.absent + s.late + s.excused).toBe(20);
    expect(await data(path)).toEqual(feed);
    for (const q of ['', '?from=2026-02-01', '?from=2026-02-10&to=2026-02-01', '?from=feb&to=mar']) {
      expect((await call(`/api/lms/students/${DEMO_STUDENT_ID}/attendance${q}`)).status, q).toBe(400);
    }
  });

  it('parent children', async () => {
    const children = childSchema.array().parse(await data(`/api/lms/parent/${DEMO_PARENT_ID}/children`));
    expect(children.map((c) => c.contactId)).toEqual([DEMO_STUDENT_ID, DEMO_SIBLING_ID]);
    expect(children[0]).toMatchObject({ class: 'Grade 6', section: 'A', isPrimary: true });
    expect(children.map((c) => c.contactId)).not.toContain(DEMO_UNRELATED_STUDENT_ID);
    // A student is not a parent.
    expect((await call(`/api/lms/parent/${DEMO_STUDENT_ID}/children`)).status).toBe(404);
  });

  it('unknown ids and routes are 404 in the envelope', async () => {
    for (const path of [
      '/api/lms/contact/c_nobody',
      '/api/lms/student/c_nobody',
      '/api/lms/student/c_nobody/parents',
      '/api/lms/user/u_nobody',
      '/api/lms/students/c_nobody/fee-status',
      '/api/lms/parent/c_nobody/children',
      `/api/lms/contact/${DEMO_STUDENT_ID}%2Fx`,
      '/api/lms/nothing',
    ]) {
      const res = await call(path);
      expect(res.status, path).toBe(404);
      expect(res.json, path).toEqual({ data: null, error: { code: 'NOT_FOUND', message: expect.any(String) } });
    }
  });

  it('percent-encoded ids are decoded as one segment', async () => {
    const encoded = encodeURIComponent(DEMO_STUDENT_ID).replace('_', '%5F');
    expect((await data(`/api/lms/contact/${encoded}`)).id).toBe(DEMO_STUDENT_ID);
  });
});

describe('completion push', () => {
  const body = {
    studentContactId: DEMO_STUDENT_ID,
    courseId: 'course_1',
    courseTitle: 'Algebra I',
    completedAt: '2026-03-02T09:00:00.000Z',
    finalScore: 91,
    certificateNumber: 'CERT-1',
  };

  it('is recorded with the slug and answered in the envelope', async () => {
    const res = await call('/api/lms/completion', { method: 'POST', body });
    expect(res.status).toBe(200);
    expect(res.json.error).toBeNull();
    expect(sim.completions).toEqual([{ slug: 'demo', body, receivedAt: expect.any(String) }]);
  });

  it('needs the key, a valid body and a POST', async () => {
    expect((await call('/api/lms/completion', { method: 'POST', body, key: null })).status).toBe(401);
    expect((await call('/api/lms/completion', { method: 'POST', body: { ...body, finalScore: 'high' } })).status).toBe(400);
    expect((await call('/api/lms/completion', { method: 'POST', body: '{not json' })).status).toBe(400);
    expect((await call('/api/lms/completion')).status).toBe(404);
    expect(sim.completions).toHaveLength(0);
    // A course in which nothing was scored completes with finalScore null (issue 19).
    expect((await call('/api/lms/completion', { method: 'POST', body: { ...body, finalScore: null } })).status).toBe(200);
    expect(sim.completions.map((c) => c.body.finalScore)).toEqual([null]);
  });
});

describe('records and faults', () => {
  it('records every request with host, path and headers; resetRecords clears them', async () => {
    await call(`/api/lms/contact/${DEMO_STUDENT_ID}?x=1`, { headers: { 'x-institution-slug': 'demo' } });
    expect(sim.requests).toEqual([
      {
        method: 'GET',
        host: `demo.${sim.baseDomain}`,
        path: `/api/lms/contact/${DEMO_STUDENT_ID}?x=1`,
        headers: expect.objectContaining({ authorization: `Bearer ${KEY}`, 'x-institution-slug': 'demo' }),
      },
    ]);
    sim.resetRecords();
    expect(sim.requests).toHaveLength(0);
  });

  it('down: the connection is reset without an answer', async () => {
    sim.setFault('down');
    await expect(call(`/api/lms/contact/${DEMO_STUDENT_ID}`)).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(sim.requests).toHaveLength(1);
  });

  it('slow: answers correctly, after the delay', async () => {
    sim.setFault('slow', { delayMs: 300 });
    const started = Date.now();
    const res = await call(`/api/lms/contact/${DEMO_STUDENT_ID}`);
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('error500, malformed and badshape', async () => {
    sim.setFault('error500');
    const failed = await call(`/api/lms/contact/${DEMO_STUDENT_ID}`);
    expect(failed.status).toBe(500);
    expect(failed.json.data).toBeNull();
    expect(failed.json.error.code).toBe('INTERNAL_ERROR');

    sim.setFault('malformed');
    const malformed = await call(`/api/lms/contact/${DEMO_STUDENT_ID}`);
    expect(malformed.status).toBe(200);
    expect(() => JSON.parse(malformed.text)).toThrow();

    sim.setFault('badshape');
    const bad = await call(`/api/lms/contact/${DEMO_STUDENT_ID}`);
    expect(bad.status).toBe(200);
    expect(contactSchema.safeParse(bad.json.data).success).toBe(false);

    sim.setFault(null);
    expect((await call(`/api/lms/contact/${DEMO_STUDENT_ID}`)).status).toBe(200);
  });

  it('a fault can be limited to a path prefix', async () => {
    sim.setFault('error500', { pathPrefix: '/api/lms/students/' });
    expect((await call(`/api/lms/students/${DEMO_STUDENT_ID}/fee-status`)).status).toBe(500);
    expect((await call(`/api/lms/contact/${DEMO_STUDENT_ID}`)).status).toBe(200);
  });

  it('PUT /_sim/fault sets the switch from outside (key required, never faulted itself), GET reads it', async () => {
    const base = { host: sim.baseDomain };
    expect((await call(CRM_SIM_CONTROL_PATH, { ...base, method: 'PUT', key: 'wrong', body: { fault: 'down' } })).status).toBe(401);
    expect((await call(CRM_SIM_CONTROL_PATH, { ...base, method: 'PUT', body: { fault: 'sideways' } })).status).toBe(400);

    const set = await call(CRM_SIM_CONTROL_PATH, { ...base, method: 'PUT', body: { fault: 'down', pathPrefix: '/api/lms/contact/' } });
    expect(set.json).toEqual({ data: { fault: 'down', delayMs: 3000, pathPrefix: '/api/lms/contact/' }, error: null });
    await expect(call(`/api/lms/contact/${DEMO_STUDENT_ID}`)).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect((await call(`/api/lms/user/${DEMO_TEACHER_ID}`)).status).toBe(200);
    // The control path answers while the simulator is "down" and is not recorded.
    expect((await call(CRM_SIM_CONTROL_PATH, base)).json.data.fault).toBe('down');
    expect(sim.requests.some((r) => r.path.startsWith('/_sim/'))).toBe(false);

    await call(CRM_SIM_CONTROL_PATH, { ...base, method: 'PUT', body: { fault: 'slow', delayMs: 200 } });
    const started = Date.now();
    expect((await call(`/api/lms/contact/${DEMO_STUDENT_ID}`)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);

    expect((await call(CRM_SIM_CONTROL_PATH, { ...base, method: 'PUT', body: { fault: null } })).json.data).toEqual({ fault: null, delayMs: null, pathPrefix: null });
    expect((await call(`/api/lms/contact/${DEMO_STUDENT_ID}`)).status).toBe(200);
  });

  it('each simulator has its own copy of the data', async () => {
    const other = await startCrmSim({ port: 0 });
    try {
      other.data[DEMO_INSTITUTION.id].students[0].feeStatus.status = 'OVERDUE';
      expect((await call(`/api/lms/students/${DEMO_STUDENT_ID}/fee-status`)).json.data.status).toBe('PAID');
      expect(crmFixtures[DEMO_INSTITUTION.id].students[0].feeStatus.status).toBe('PAID');
    } finally {
      await other.close();
    }
  });
});

describe('fixtures', () => {
  it.each(Object.values(crmFixtures).map((f) => [f.institution.slug, f] as const))('%s is complete', (_slug, f) => {
    expect(f.students.length).toBeGreaterThanOrEqual(30);
    expect(f.classes.length).toBeGreaterThanOrEqual(3);
    expect(f.classes.every((c) => c.sections.length >= 2)).toBe(true);
    expect(f.admin.role).toBe('ADMIN');
    expect(f.teacher.role).toBe('TEACHER');
    const sections = new Set(f.students.map((s) => s.student.currentEnrolment?.sectionId));
    expect(sections.size).toBe(6);
    for (const s of f.students) {
      expect(s.student.contactId).toBe(s.contact.id);
      expect(s.parents.length).toBeGreaterThan(0);
    }
    expect(new Set(f.students.map((s) => s.feeStatus.status))).toEqual(new Set(['PAID', 'PARTIAL', 'OVERDUE']));
    expect(f.parents.some((p) => p.children.length === 2)).toBe(true);
    expect(f.parents.every((p) => p.contact.contactType === 'CONTACT_PARENT')).toBe(true);
    const ids = [...f.students.map((s) => s.contact.id), ...f.parents.map((p) => p.contact.id), ...f.staff.map((u) => u.id)];
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('named ids point at what their names say', () => {
    const student = (id: string) => demoFixtures.students.find((s) => s.contact.id === id)!;
    expect(DEMO_STUDENT_ID).toBe('c_demo_stu_01');
    expect(DEMO_PARENT_ID).toBe('c_demo_par_01');
    expect(DEMO_ADMIN_ID).toBe('u_demo_admin');
    expect(DEMO_TEACHER_ID).toBe('u_demo_teacher');
    expect(student(OVERDUE_STUDENT_ID).feeStatus.status).toBe('OVERDUE');
    expect(demoFixtures.students.filter((s) => s.feeStatus.status === 'OVERDUE')).toHaveLength(1);
    expect(student(PAID_STUDENT_ID).feeStatus.status).toBe('PAID');
    expect(student(PARTIAL_STUDENT_ID).feeStatus.status).toBe('PARTIAL');
    expect(student(DEMO_UNRELATED_STUDENT_ID).parents.map((p) => p.parentContactId)).not.toContain(DEMO_PARENT_ID);
  });
});

describe('more students (load runs)', () => {
  it('students: N adds c_<slug>_stu_31… seated in the six sections, with addresses of their own; the fixed 30 are unchanged', async () => {
    const big = await startCrmSim({ port: 0, students: 250 });
    try {
      const demo = big.data[DEMO_INSTITUTION.id];
      expect(demo.students).toHaveLength(250);
      expect(demo.students.slice(0, 30)).toEqual(demoFixtures.students);
      expect(big.data[SECOND_INSTITUTION.id].students).toHaveLength(250);
      const ids = demo.students.map((s) => s.contact.id);
      expect(new Set(ids).size).toBe(250);
      expect(ids[30]).toBe('c_demo_stu_31');
      expect(ids[249]).toBe('c_demo_stu_250');
      const emails = demo.students.map((s) => s.contact.email);
      expect(new Set(emails).size).toBe(250);
      const bySection = new Map<string, number>();
      for (const s of demo.students) bySection.set(s.student.currentEnrolment!.sectionId!, (bySection.get(s.student.currentEnrolment!.sectionId!) ?? 0) + 1);
      expect([...bySection.values()].sort()).toEqual([41, 41, 42, 42, 42, 42]);

      // Served like the others: contact, student record, fee status, section roster.
      const get = async (path: string) =>
        (await request(`http://127.0.0.1:${big.port}${path}`, { headers: { host: `demo.${big.baseDomain}`, authorization: `Bearer ${big.apiKey}` } })).body.json() as Promise<any>;
      expect((await get('/api/lms/contact/c_demo_stu_250')).data).toMatchObject({ id: 'c_demo_stu_250', email: emails[249], contactType: 'CONTACT_STUDENT' });
      expect((await get('/api/lms/students/c_demo_stu_250/fee-status')).data.status).toBe('PAID');
      expect((await get('/api/lms/student/c_demo_stu_250/parents')).data).toEqual([]);
      expect((await get(`/api/lms/sections/${DEMO_SECTION_ID}/students`)).data).toHaveLength(bySection.get(DEMO_SECTION_ID)!);
    } finally {
      await big.close();
    }
  });
});

describe('runCrmSimCli', () => {
  it('starts on CRM_SIM_PORT and prints the base domain and key', async () => {
    const lines: string[] = [];
    const cli = await runCrmSimCli({ CRM_SIM_PORT: '0' }, { log: (l: string) => lines.push(l) }, { handleSignals: false });
    try {
      expect(cli.apiKey).toBe('dev-crm-api-key');
      const out = lines.join('\n');
      expect(out).toContain(`CRM_BASE_DOMAIN=${cli.baseDomain}`);
      expect(out).toContain(`CRM_API_KEY=${cli.apiKey}`);
      expect(out).toContain(`http://${cli.baseDomain}${CRM_SIM_CONTROL_PATH}`);
      expect(cli.data[DEMO_INSTITUTION.id].students).toHaveLength(30);
    } finally {
      await cli.close();
    }
  });

  it('CRM_SIM_STUDENTS sets the students per institution; a bad value is refused', async () => {
    const cli = await runCrmSimCli({ CRM_SIM_PORT: '0', CRM_SIM_STUDENTS: '120' }, { log: () => undefined }, { handleSignals: false });
    try {
      expect(cli.data[DEMO_INSTITUTION.id].students).toHaveLength(120);
    } finally {
      await cli.close();
    }
    await expect(runCrmSimCli({ CRM_SIM_PORT: '0', CRM_SIM_STUDENTS: 'lots' }, { log: () => undefined }, { handleSignals: false })).rejects.toThrow(/CRM_SIM_STUDENTS/);
  });
});
