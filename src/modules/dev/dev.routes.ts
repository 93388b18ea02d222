import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';
import { actorOf } from '../../platform/auth/auth-plugin.js';
import { requireAdmin } from '../../platform/auth/permissions.js';
import { AppError } from '../../platform/http/errors.js';
import { seedInstitution } from '../../dev/seed.js';
import { seedScormPackages } from '../../dev/scorm-demo.js';
import { seedResultSchema } from './dev.schemas.js';

/** Development seeding; not registered at all in production. */
const routes: ModuleRoutes = async (app, deps) => {
  // Not registered at all in production: /api/dev/* is an unknown route there.
  if (deps.config.isProduction) return;
  typed(app).post(
    '/api/dev/seed',
    {
      schema: {
        tags: ['dev'],
        operationId: 'devSeed',
        summary: "Seed demo courses, lessons, enrollments and progress into the caller's institution (ADMIN; not registered in production; idempotent)",
        response: {
          200: envelope(seedResultSchema),
        },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      if (deps.config.isProduction) throw new AppError('FORBIDDEN', 'Seeding is disabled in production');
      requireAdmin(actor);
      const result = await seedInstitution(deps.database.db, deps.clock, actor.institutionId, actor.personId);
      await seedScormPackages(deps, actor.institutionId);
      return ok(result);
    },
  );
};

export const devModule: AppModule = { name: 'dev', routes };
