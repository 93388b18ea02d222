import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import { idParams, listQuery, reviewSchema, submitReviewBody } from './reviews.schemas.js';
import * as svc from './reviews.service.js';

const tags = ['reviews'];

/** Spec 4.9 `POST /api/reviews`, and the reviews of a course. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);

  r.post(
    '/api/reviews',
    {
      schema: {
        tags,
        operationId: 'submitCourseReview',
        summary: 'Review a course: rating 1–5 and an optional comment (enrolled students)',
        description:
          'Only a student with an ACTIVE or COMPLETED enrollment in the course (else 403 ENROLLMENT_REQUIRED; 404 for a course they may not know). One review ' +
          'per student and course: the first POST creates it (201), a later one updates it (200; an absent `comment` keeps the current one). The course’s ' +
          '`averageRating` and `reviewCount` appear in the catalogue and the course detail.',
        body: submitReviewBody,
        response: { 200: envelope(reviewSchema), 201: envelope(reviewSchema) },
      },
    },
    async (req, reply) => {
      const { review, created } = await svc.submitReview(ctxOf(req), req.body);
      return reply.code(created ? 201 : 200).send(ok(review));
    },
  );

  r.get(
    '/api/courses/:id/reviews',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'listCourseReviews',
        summary: 'Reviews of a course, newest first (latest change), with student names',
        description:
          'Anyone who may see the course (published, or with an enrollment; staff always). Paginated (default 20). Any other course, or an unknown one, 404 NOT_FOUND. Names come from the CRM (a generic label when it cannot give one). 400 VALIDATION_ERROR for a bad page value.',
        params: idParams,
        querystring: listQuery,
        response: { 200: pagedEnvelope(reviewSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await svc.listReviews(ctxOf(req), req.params.id, req.query);
      return paged(rows, meta);
    },
  );
};

export const reviewsModule: AppModule = { name: 'reviews', routes };
