import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../platform/context.js';
import type { JobHandlers } from '../platform/queue/queue.js';

export type App = FastifyInstance;

/** Registers a domain's HTTP routes. */
export type ModuleRoutes = (app: FastifyInstance, deps: Deps) => Promise<void>;

/**
 * A domain's worker job handlers, keyed by job name. Names and payload schemas are defined in
 * platform/queue/jobs.schemas.ts, so each handler receives its typed payload.
 */
export type ModuleJobs = (deps: Deps) => JobHandlers;

/**
 * One wiring point per domain: what the domain exports, and what `modules/index.ts` lists.
 * The app registers `routes`; the worker (`lms worker`) runs `jobs`.
 */
export interface AppModule {
  name: string;
  routes?: ModuleRoutes;
  jobs?: ModuleJobs;
}

export const typed = (app: FastifyInstance) => app.withTypeProvider<ZodTypeProvider>();
