import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';

/**
 * The single-page web app (web/), served at `/` next to the API. `npm run build` writes it to
 * dist/web beside the compiled server; `npm start` builds it into web/dist beside the sources
 * (scripts/build-web.mjs). This file sits at the same depth in src/ and dist/, so the tree it
 * runs from tells which one applies. WEB_DIR overrides both.
 */
export function defaultWebDir(): string {
  const tree = fileURLToPath(new URL('../..', import.meta.url)); // <repo>/src/ or <deploy>/dist/
  return basename(resolve(tree)) === 'dist' ? join(tree, 'web') : resolve(tree, '..', 'web', 'dist');
}

export interface WebApp {
  /** The directory served, or null when no built app is there. */
  root: string | null;
  /** Paths that stay the API's (and its docs'): never answered with the app's index.html. */
  isServerPath(path: string): boolean;
  /** Sends index.html for a client-side route (GET or HEAD, not a server path); false when it does not apply. */
  sendIndex(req: FastifyRequest, reply: FastifyReply): boolean;
}

const SERVER_PREFIXES = ['/api/', '/docs', '/openapi.json', '/healthz', '/readyz'];

export function webAppAt(dir: string | undefined): WebApp {
  const root = dir ? resolve(dir) : null;
  const built = root !== null && existsSync(join(root, 'index.html'));
  const isServerPath = (path: string) => path === '/api' || SERVER_PREFIXES.some((p) => path.startsWith(p));
  return {
    root: built ? root : null,
    isServerPath,
    sendIndex(req, reply) {
      if (!built || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
      const path = req.url.split('?')[0] ?? '/';
      // A missing file (`/assets/x.js`, `/favicon.ico`) stays a 404; only page paths get the app.
      if (isServerPath(path) || /\.[a-z0-9]+$/i.test(path)) return false;
      reply.header('cache-control', 'no-cache');
      void reply.sendFile('index.html');
      return true;
    },
  };
}

/**
 * Serves the built files: hashed assets under /assets/ for a year (their names change with
 * their content), everything else (index.html, the service worker) revalidated on each load.
 */
export async function registerWebApp(app: FastifyInstance, web: WebApp) {
  if (!web.root) {
    app.log.warn('the web app is not built (npm run build:web): / serves nothing');
    return;
  }
  await app.register(fastifyStatic, {
    root: web.root,
    prefix: '/',
    // A route per file found at start-up, no catch-all: a catch-all GET would swallow what the
    // router refuses (an over-long path parameter is 400) and every unknown path. A missing file
    // goes to the not-found handler (the app's index.html for page paths, else 404); a rebuild
    // while the server runs needs a restart to be served.
    wildcard: false,
    index: ['index.html'],
    cacheControl: false,
    setHeaders(res, path) {
      res.setHeader('cache-control', path.includes(`${join('/', 'assets', '/')}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}
