import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import { settingsSchema as settingsResponse, settingsPatchBody as patchBody } from './settings.schemas.js';
import { patchSettings, readSettings } from './settings.service.js';

const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctx = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);
  r.get(
    '/api/settings',
    {
      schema: {
        tags: ['settings'],
        operationId: 'getSettings',
        summary: 'Institution settings, including the fee gating toggle',
        description:
          'Any signed-in user of the institution, students and parents included (clients read the toggles: self-enrollment, fee gating, time zone…): name, slug and every setting with its default applied. No error beyond authentication (401 AUTH_REQUIRED) and rate limiting (429 RATE_LIMITED).',
        response: { 200: envelope(settingsResponse) },
      },
    },
    async (req) => ok(await readSettings(ctx(req))),
  );
  r.patch(
    '/api/settings',
    {
      schema: {
        tags: ['settings'],
        operationId: 'updateSettings',
        summary: 'Change institution settings (ADMIN); only sent fields change',
        description:
          'ADMIN only (403 FORBIDDEN otherwise). Settings and the institution name; unknown keys, an empty body or an invalid value (an unknown time zone…) are 400 VALIDATION_ERROR. A call that changes something is audited (settings.update).',
        body: patchBody,
        response: { 200: envelope(settingsResponse) },
      },
    },
    async (req) => ok(await patchSettings(ctx(req), req.body)),
  );
};

export const settingsModule: AppModule = { name: 'settings', routes };
