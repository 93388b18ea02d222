/**
 * The hand-written floor of GET /api/me/notes (issue 17): the least a Node server can do for
 * this route, so `npm run bench` can print our route as a ratio to it.
 *
 * Fastify with no plugins, one `pg` pool (10 connections, as the app's DB_POOL_SIZE default),
 * fast-jwt's HS256 verifier with the app's AUTH_SECRET, and the two SQL statements a plain
 * implementation of the route runs, on the same database: the page (note ⋈ lesson ⋈ course,
 * updatedAt desc, id desc, limit/offset) and the exact count of the caller's notes, both in
 * parallel, as unnamed statements (planned with each call's values, pg's default). `?search=` adds the same `content ILIKE '%…%' ESCAPE '\'` to both. No validation
 * beyond what the SQL needs, no tenancy helpers, no logging, `JSON.stringify` of the envelope.
 * Our route keeps the unfiltered count in a counter row (student_annotation_counts) instead, and
 * a search's count per version of the student's notes (src/modules/notes/filtered-totals.ts),
 * which is how it can beat this floor; `me-notes-search-uncached` is our route counting as this
 * floor does.
 */
import Fastify from 'fastify';
import { createVerifier } from 'fast-jwt';
import pg from 'pg';

const PAGE_SQL = (search: boolean) => `
  select n.id, n.lesson_id as "lessonId", n.content, n.timestamp_seconds as "timestampSeconds",
         n.created_at as "createdAt", n.updated_at as "updatedAt",
         l.title as "lessonTitle", l.type as "lessonType", c.id as "courseId", c.title as "courseTitle"
  from lesson_notes n
  join lessons l on l.institution_id = n.institution_id and l.id = n.lesson_id
  join courses c on c.institution_id = l.institution_id and c.id = l.course_id
  where n.institution_id = $1 and n.student_id = $2 ${search ? `and n.content ilike $5 escape '\\'` : ''}
  order by n.updated_at desc, n.id desc
  limit $3 offset $4`;
const COUNT_SQL = (search: boolean) =>
  `select count(*)::int as total from lesson_notes n where n.institution_id = $1 and n.student_id = $2 ${search ? `and n.content ilike $3 escape '\\'` : ''}`;

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function startFloor(databaseUrl: string, authSecret: string) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const verify = createVerifier({ key: authSecret, algorithms: ['HS256'], cache: true });
  const app = Fastify({ logger: false });

  app.get('/api/me/notes', async (req, reply) => {
    const auth = req.headers.authorization;
    let claims: { sub: string; institutionId: string };
    try {
      claims = verify(auth?.startsWith('Bearer ') ? auth.slice(7) : '') as typeof claims;
    } catch {
      return reply.code(401).send({ data: null, error: { code: 'AUTH_REQUIRED', message: 'Authentication is required' } });
    }
    const q = req.query as { page?: string; perPage?: string; search?: string };
    const page = Math.max(1, Number(q.page ?? 1) || 1);
    const perPage = Math.min(100, Math.max(1, Number(q.perPage ?? 20) || 20));
    const search = q.search ? `%${escapeLike(q.search)}%` : undefined;
    const owner = [claims.institutionId, claims.sub];
    const [rows, counted] = await Promise.all([
      pool.query(PAGE_SQL(!!search), [...owner, perPage, (page - 1) * perPage, ...(search ? [search] : [])]),
      pool.query<{ total: number }>(COUNT_SQL(!!search), search ? [...owner, search] : owner),
    ]);
    const total = counted.rows[0]!.total;
    reply.header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify({ data: rows.rows, error: null, meta: { total, page, perPage, totalPages: Math.ceil(total / perPage) } });
  });

  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}
