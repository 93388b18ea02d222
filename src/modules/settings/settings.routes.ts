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
      schema: { tags: ['settings'], operationId: 'getSettings', summary: 'Institution settings, including the fee gating toggle', response: { 200: envelope(settingsResponse) } },
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
        body: patchBody,
        response: { 200: envelope(settingsResponse) },
      },
    },
    async (req) => ok(await patchSettings(ctx(req), req.body)),
  );
};

export const settingsModule: AppModule = { name: 'settings', routes };
