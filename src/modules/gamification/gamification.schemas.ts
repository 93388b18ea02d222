import { z } from 'zod';
import { blankIsAbsent } from '../../platform/http/query-filters.js';
import { paginationFields } from '../../platform/http/pagination.js';

export const leaderboardQuery = z.object({
  period: z.preprocess(blankIsAbsent, z.enum(['all', 'month', 'week']).default('all')).describe('all time, this calendar month or this ISO week (institution time zone)'),
  ...paginationFields,
});

export const leaderboardRow = z.object({ rank: z.number().int(), studentId: z.string(), name: z.string(), points: z.number().int(), isMe: z.boolean() });

const badge = z.object({ key: z.string(), name: z.string(), description: z.string() });
export const badgesSchema = z.object({ earned: z.array(badge.extend({ earnedAt: z.string() })), available: z.array(badge) });

export const streakSchema = z.object({
  currentStreak: z.number().int().describe('consecutive days with learning, ending today or yesterday'),
  longestStreak: z.number().int(),
  lastActiveDay: z.string().nullable(),
  today: z.string().describe("today's date in the institution's time zone"),
});
