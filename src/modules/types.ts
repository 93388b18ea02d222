import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../platform/context.js';

export type App = FastifyInstance;
/** A domain module registers its own routes (and, through `jobs`, its worker handlers). */
export type AppModule = (app: FastifyInstance, deps: Deps) => Promise<void>;

export const typed = (app: FastifyInstance) => app.withTypeProvider<ZodTypeProvider>();
