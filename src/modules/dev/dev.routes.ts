import { z } from 'zod';
import type { AppModule } from '../types.js';
import { typed } from '../types.js';
import { commonErrors, envelope, ok } from '../../platform/http/envelope.js';
import { actorOf } from '../../platform/auth/auth-plugin.js';
import { requireAdmin } from '../../platform/auth/permissions.js';
import { AppError } from '../../platform/http/errors.js';
import { seedInstitution } from '../../dev/seed.js';

/** Development seeding; not registered at all in production. */
export const devModule: AppModule = async (app, deps) => {
  // Not registered at all in production: /api/dev/* is an unknown route there.
  if (deps.config.isProduction) return;
  typed(app).post('/api/dev/seed', {
    schema: {
      tags: ['dev'],
      operationId: 'devSeed',
      summary: "Seed demo courses, lessons, enrollments and progress into the caller's institution (ADMIN; not registered in production; idempotent)",
      response: {
        200: envelope(z.object({ institutionId: z.string(), courses: z.number().int(), lessons: z.number().int(), enrollments: z.number().int(), created: z.boolean() })),
        ...commonErrors,
      },
    },
  }, async (req) => {
    const actor = actorOf(req);
    if (deps.config.isProduction) throw new AppError('FORBIDDEN', 'Seeding is disabled in production');
    requireAdmin(actor);
    return ok(await seedInstitution(deps.database.db, deps.clock, actor.institutionId, actor.personId));
  });
};
