import type { AppModule } from './types.js';
import { healthModule } from './health/health.routes.js';
import { authModule } from './auth/auth.routes.js';
import { notesModule } from './notes/notes.routes.js';
import { quizzesModule } from './quizzes/quizzes.routes.js';
import { captionsModule } from './captions/captions.routes.js';
import { filesModule } from './files/files.routes.js';
import { coursesModule } from './courses/courses.routes.js';
import { enrollmentsModule } from './enrollments/enrollments.routes.js';
import { learnModule } from './learn/learn.routes.js';
import { progressModule } from './progress/progress.routes.js';
import { certificatesModule } from './certificates/certificates.routes.js';
import { settingsModule } from './settings/settings.routes.js';
import { syncModule } from './sync/sync.routes.js';
import { notificationsModule } from './notifications/notifications.routes.js';
import { assignmentsModule } from './assignments/assignments.routes.js';
import { parentModule } from './parent/parent.routes.js';
import { gamificationModule } from './gamification/gamification.routes.js';
import { learningPathsModule } from './learning-paths/learning-paths.routes.js';
import { complianceModule } from './compliance/compliance.routes.js';
import { liveSessionsModule } from './live-sessions/live-sessions.routes.js';
import { announcementsModule } from './announcements/announcements.routes.js';
import { discussionsModule } from './discussions/discussions.routes.js';
import { reviewsModule } from './reviews/reviews.routes.js';
import { auditModule } from './audit/audit.routes.js';
import { analyticsModule } from './analytics/analytics.routes.js';
import { cronModule } from './cron/cron.routes.js';
import { scormModule } from './scorm/scorm.routes.js';
import { devModule } from './dev/dev.routes.js';
import { xapiModule } from './xapi/xapi.routes.js';
import { webappModule } from './webapp/webapp.routes.js';

/**
 * Every domain module, in registration order: the only list. The app registers each module's
 * `routes` (app.ts); the worker runs each module's `jobs` (worker/worker.ts).
 */
export const modules: AppModule[] = [
  healthModule,
  authModule,
  settingsModule,
  coursesModule,
  enrollmentsModule,
  learnModule,
  progressModule,
  quizzesModule,
  scormModule,
  certificatesModule,
  syncModule,
  notesModule,
  captionsModule,
  filesModule,
  assignmentsModule,
  parentModule,
  gamificationModule,
  learningPathsModule,
  complianceModule,
  liveSessionsModule,
  notificationsModule,
  announcementsModule,
  discussionsModule,
  reviewsModule,
  auditModule,
  analyticsModule,
  cronModule,
  xapiModule,
  devModule,
  webappModule,
];
