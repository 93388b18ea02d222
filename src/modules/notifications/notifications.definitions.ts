import type { Role } from '../../platform/auth/tokens.js';

/** Delivery channels, as stored on delivery rows (spec 2.8). */
export const CHANNELS = ['IN_APP', 'email', 'push'] as const;
export type Channel = (typeof CHANNELS)[number];

/**
 * Preference frequencies. Spec 2.9 shows IMMEDIATE, DAILY_DIGEST and OFF; WEEKLY_DIGEST uses
 * the weekly digest time the same way.
 */
export const FREQUENCIES = ['IMMEDIATE', 'DAILY_DIGEST', 'WEEKLY_DIGEST', 'OFF'] as const;
export type Frequency = (typeof FREQUENCIES)[number];

export const CATEGORIES = ['ASSESSMENT', 'TEACHING', 'LIVE_CLASSES', 'ENROLLMENT', 'ENGAGEMENT', 'COURSE_UPDATES', 'COMMUNITY', 'REPORTS'] as const;
export type Category = (typeof CATEGORIES)[number];

export interface NotificationDefinition {
  key: string;
  label: string;
  description: string;
  category: Category;
  defaultChannels: readonly Channel[];
  /** false: no channel may be turned off and the frequency may not be OFF. */
  canDisable: boolean;
  /** false: IMMEDIATE is the only frequency. */
  canChangeFrequency: boolean;
  availableTo: readonly Role[];
  /** A child key (a per-trigger variant) follows its parent's stored preference; users set only top-level keys. */
  parentKey: string | null;
}

const ALL_ROLES: readonly Role[] = ['STUDENT', 'TEACHER', 'ADMIN', 'PARENT'];
const STAFF: readonly Role[] = ['TEACHER', 'ADMIN'];
const LEARNERS: readonly Role[] = ['STUDENT'];
const EVERY_CHANNEL: readonly Channel[] = ['IN_APP', 'email', 'push'];

const def = (d: Omit<NotificationDefinition, 'parentKey'> & { parentKey?: string }): NotificationDefinition => ({ ...d, parentKey: d.parentKey ?? null });

/**
 * Every notification key the service emits (spec 6.3 and the modules' own), with its defaults.
 * A key sent through `notify` must be here; its templates live in `notification_templates`
 * (system defaults seeded by migration 0004, institution overrides beside them).
 */
export const DEFINITIONS: readonly NotificationDefinition[] = [
  def({
    key: 'ASSESS_GRADED',
    label: 'Work graded',
    description: 'A teacher graded your quiz or assignment.',
    category: 'ASSESSMENT',
    defaultChannels: EVERY_CHANNEL,
    canDisable: true,
    canChangeFrequency: true,
    availableTo: LEARNERS,
  }),
  def({
    key: 'ASSESS_PEER_GRADED',
    label: 'Peer reviews complete',
    description: 'All peer reviews of your submission are in.',
    category: 'ASSESSMENT',
    defaultChannels: EVERY_CHANNEL,
    canDisable: true,
    canChangeFrequency: true,
    availableTo: LEARNERS,
  }),
  def({
    key: 'PEER_REVIEW_ASSIGNED',
    label: 'Peer review to do',
    description: 'A classmate’s submission was assigned to you for review.',
    category: 'ASSESSMENT',
    defaultChannels: ['IN_APP', 'email'],
    canDisable: true,
    canChangeFrequency: true,
    availableTo: LEARNERS,
  }),
  def({
    key: 'ASSIGNMENT_DUE_REMINDER',
    label: 'Assignment due soon',
    description: 'An assignment you have not submitted is due within 24 hours.',
    category: 'ASSESSMENT',
    defaultChannels: ['IN_APP'],
    canDisable: true,
    canChangeFrequency: false,
    availableTo: LEARNERS,
  }),
  def({
    key: 'TEACHER_NEW_SUBMISSION',
    label: 'New submission',
    description: 'A student submitted work, or a peer review was flagged, in a course you teach.',
    category: 'TEACHING',
    defaultChannels: ['IN_APP', 'email'],
    canDisable: true,
    canChangeFrequency: true,
    availableTo: STAFF,
  }),
  def({
    key: 'LIVE_CLASS_RECORDING_READY',
    label: 'Class recording ready',
    description: 'The recording of a live class of your course is available.',
    category: 'LIVE_CLASSES',
    defaultChannels: EVERY_CHANNEL,
    canDisable: true,
    canChangeFrequency: true,
    availableTo: LEARNERS,
  }),
  def({
    key: 'LIVE_CLASS_SCHEDULED',
    label: 'Live class scheduled',
    description: 'A live class was scheduled in one of your courses.',
    category: 'LIVE_CLASSES',
    defaultChannels: EVERY_CHANNEL,
    canDisable: true,
    canChangeFrequency: true,
    availableTo: LEARNERS,
  }),
  def({
    key: 'ENROLL_WELCOME',
    label: 'Welcome to a course',
    description: 'You were enrolled in a course.',
    category: 'ENROLLMENT',
    defaultChannels: ['IN_APP', 'email'],
    canDisable: false,
    canChangeFrequency: false,
    availableTo: LEARNERS,
  }),
  def({
    key: 'COURSE_COMPLETED',
    label: 'Course completed',
    description: 'You completed a course and earned its certificate.',
    category: 'ENROLLMENT',
    defaultChannels: EVERY_CHANNEL,
    canDisable: true,
    canChangeFrequency: true,
    availableTo: LEARNERS,
  }),
  def({
    key: 'REENGAGE_NUDGE',
    label: 'Come back to your courses',
    description: 'Reminders when you have not studied for a while.',
    category: 'ENGAGEMENT',
    defaultChannels: ['IN_APP', 'email'],
    canDisable: true,
    canChangeFrequency: true,
    availableTo: LEARNERS,
  }),
  def({
    key: 'REENGAGE_NUDGE_INACTIVE_7D',
    label: 'Inactive for 7 days',
    description: 'You have not opened a lesson for 7 days.',
    category: 'ENGAGEMENT',
    defaultChannels: ['IN_APP', 'email'],
    canDisable: true,
    canChangeFrequency: true,
    availableTo: LEARNERS,
    parentKey: 'REENGAGE_NUDGE',
  }),
  def({
    key: 'COURSE_ANNOUNCEMENT',
    label: 'Course announcement',
    description: 'Your teacher posted an announcement in a course.',
    category: 'COURSE_UPDATES',
    defaultChannels: EVERY_CHANNEL,
    canDisable: true,
    canChangeFrequency: true,
    availableTo: LEARNERS,
  }),
  def({
    key: 'DISCUSSION_REPLY',
    label: 'Reply to your discussion',
    description: 'Someone replied to a discussion thread you started.',
    category: 'COMMUNITY',
    defaultChannels: ['IN_APP'],
    canDisable: true,
    canChangeFrequency: true,
    availableTo: ALL_ROLES,
  }),
  def({
    key: 'BADGE_EARNED',
    label: 'Badge earned',
    description: 'You earned a badge.',
    category: 'ENGAGEMENT',
    defaultChannels: ['IN_APP'],
    canDisable: true,
    canChangeFrequency: true,
    availableTo: LEARNERS,
  }),
  def({
    key: 'COMPLIANCE_DUE',
    label: 'Compliance training due',
    description: 'Required training is due soon or overdue.',
    category: 'COURSE_UPDATES',
    defaultChannels: ['IN_APP', 'email'],
    canDisable: false,
    canChangeFrequency: false,
    availableTo: ALL_ROLES,
  }),
  def({
    key: 'REPORT_SCHEDULED',
    label: 'Scheduled report',
    description: 'A report you scheduled is ready.',
    category: 'REPORTS',
    defaultChannels: ['email'],
    canDisable: true,
    canChangeFrequency: false,
    availableTo: STAFF,
  }),
  def({
    key: 'REPORT_ALERT',
    label: 'Report alert',
    description: 'A report alert you set crossed its threshold.',
    category: 'REPORTS',
    defaultChannels: ['IN_APP', 'email'],
    canDisable: true,
    canChangeFrequency: true,
    availableTo: STAFF,
  }),
];

const byKey = new Map(DEFINITIONS.map((d) => [d.key, d]));

export const definitionOf = (key: string): NotificationDefinition | undefined => byKey.get(key);

/** Keys a role may see and set (top-level) or receive (child keys follow their parent). */
export const definitionsFor = (role: Role) => DEFINITIONS.filter((d) => d.availableTo.includes(role));

/** The key whose stored preference governs `key`: its parent for a child key. */
export const preferenceKeyOf = (d: NotificationDefinition) => d.parentKey ?? d.key;
