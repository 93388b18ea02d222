import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import { badgesSchema, leaderboardQuery, leaderboardRow, streakSchema } from './gamification.schemas.js';
import * as gamification from './gamification.service.js';

const tags = ['gamification'];

/** Spec 4.9 gamification rows: points for learning events, streaks, badges, the leaderboard. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);

  r.get(
    '/api/gamification/leaderboard',
    {
      schema: {
        tags,
        operationId: 'getLeaderboard',
        summary: "Points ranking of the caller's institution",
        description:
          'Points over the period, highest first; ties go to who reached the total first, then by id. Paginated (default 20). Points: lesson completed 10, quiz passed 20, ' +
          'assignment passed 25, course completed 100, 7-day streak 50, 30-day streak 200, each once per event. Any signed-in user of the institution. Names come from the CRM (a generic label when it cannot give one). 400 VALIDATION_ERROR for an unknown period or a bad page value.',
        querystring: leaderboardQuery,
        response: { 200: pagedEnvelope(leaderboardRow) },
      },
    },
    async (req) => {
      const { rows, meta } = await gamification.leaderboard(ctxOf(req), { period: req.query.period, page: req.query.page, perPage: req.query.perPage ?? req.query.limit ?? 20 });
      return paged(rows, meta);
    },
  );

  r.get(
    '/api/gamification/badges',
    {
      schema: {
        tags,
        operationId: 'getMyBadges',
        summary: "The caller's badges with earned dates, and the ones not yet earned",
        description:
          'Any signed-in user: their own badges (most recent first) and the ones they have not earned yet. No error beyond authentication (401 AUTH_REQUIRED) and rate limiting (429 RATE_LIMITED).',
        response: { 200: envelope(badgesSchema) },
      },
    },
    async (req) => ok(await gamification.myBadges(ctxOf(req))),
  );

  r.get(
    '/api/gamification/streak',
    {
      schema: {
        tags,
        operationId: 'getMyStreak',
        summary: "The caller's learning streak (calendar days in the institution's time zone)",
        description:
          'Any signed-in user: currentStreak (consecutive days with learning activity — progress, quiz attempts, assignments handed in — ending today or yesterday), longestStreak, lastActiveDay and today, in the institution’s time zone. No error beyond authentication (401 AUTH_REQUIRED) and rate limiting (429 RATE_LIMITED).',
        response: { 200: envelope(streakSchema) },
      },
    },
    async (req) => ok(await gamification.myStreak(ctxOf(req))),
  );
};

export const gamificationModule: AppModule = { name: 'gamification', routes };
