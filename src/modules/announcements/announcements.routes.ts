import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { deletedSchema, envelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import { announcementSchema, createAnnouncementBody, idParams, listQuery, updateAnnouncementBody } from './announcements.schemas.js';
import * as svc from './announcements.service.js';

const tags = ['announcements'];

/** Spec 4.9 `/api/courses/{id}/announcements` (class-targetable), with PATCH and DELETE of one announcement. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);

  r.get(
    '/api/courses/:id/announcements',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'listAnnouncements',
        summary: 'Announcements of a course, pinned first, then newest first',
        description:
          'Course staff (canManageCourses) see every announcement. A student with an ACTIVE or COMPLETED enrollment sees the whole-course announcements and the ' +
          'class or section ones that reached them; anyone else 403 ENROLLMENT_REQUIRED (404 for a course they may not know). Paginated (default 20).',
        params: idParams,
        querystring: listQuery,
        response: { 200: pagedEnvelope(announcementSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await svc.listAnnouncements(ctxOf(req), req.params.id, req.query);
      return paged(rows, meta);
    },
  );

  r.post(
    '/api/courses/:id/announcements',
    {
      config: { recordScope: 'institution', errors: ['BAD_GATEWAY'] },
      schema: {
        tags,
        operationId: 'createAnnouncement',
        summary: 'Post an announcement to the whole course, or to CRM classes and sections (canManageCourses)',
        description:
          'Without `classIds` and `sectionIds` it targets the whole course. With them, the students are read from the CRM now (the sections of each class, then ' +
          'each section’s roster) and intersected with the course’s ACTIVE enrollments; only they see it. Every student reached gets COURSE_ANNOUNCEMENT. An ' +
          'id the CRM does not know → 400; the CRM unreachable → 502. The body is stored as given and served as plain text. Needs canManageCourses (403 FORBIDDEN otherwise), any course of the institution (404 NOT_FOUND otherwise). Audited (announcement.create).',
        params: idParams,
        body: createAnnouncementBody,
        response: { 201: envelope(announcementSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await svc.createAnnouncement(ctxOf(req), req.params.id, req.body))),
  );

  r.patch(
    '/api/announcements/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'updateAnnouncement',
        summary: 'Change an announcement’s title, body or pin (its author or ADMIN)',
        description:
          'The audience stays as posted and nobody is notified again. A changed title or body sets `editedAt`. Needs canManageCourses and the announcement’s author or an ADMIN (anyone else 403 FORBIDDEN, whatever the id); an unknown announcement 404 NOT_FOUND. Audited (announcement.update).',
        params: idParams,
        body: updateAnnouncementBody,
        response: { 200: envelope(announcementSchema) },
      },
    },
    async (req) => ok(await svc.updateAnnouncement(ctxOf(req), req.params.id, req.body)),
  );

  r.delete(
    '/api/announcements/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'deleteAnnouncement',
        summary: 'Delete an announcement (its author or ADMIN)',
        description:
          'Removes it for everyone it reached. Needs canManageCourses and the announcement’s author or an ADMIN (anyone else 403 FORBIDDEN, whatever the id); an unknown announcement 404 NOT_FOUND. Audited (announcement.delete).',
        params: idParams,
        response: { 200: envelope(deletedSchema) },
      },
    },
    async (req) => ok(await svc.deleteAnnouncement(ctxOf(req), req.params.id)),
  );
};

export const announcementsModule: AppModule = { name: 'announcements', routes };
