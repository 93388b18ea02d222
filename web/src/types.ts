// The shapes the app reads, as /openapi.json documents them (only the fields it uses).

export type Role = 'STUDENT' | 'TEACHER' | 'ADMIN' | 'PARENT';
export type LessonType = 'VIDEO' | 'TEXT' | 'PDF' | 'QUIZ' | 'ASSIGNMENT' | 'SCORM' | 'LIVE' | 'INTERACTIVE';

export interface Session {
  userId: string;
  personId: string;
  institutionId: string;
  role: Role;
  contactId: string | null;
  isContact: boolean;
  contactType: string | null;
  permissions: string[];
  name: string | null;
  email: string | null;
}

export interface WebConfig {
  signInUrl: string | null;
  devSignIn: boolean;
  vapidPublicKey: string | null;
}

export interface DemoPerson {
  personId: string;
  name: string;
  role: Role;
  institutionId: string;
  institutionName: string;
  detail: string | null;
}

export interface Course {
  id: string;
  title: string;
  description: string | null;
  status: 'DRAFT' | 'PUBLISHED' | 'ARCHIVED';
  dripMode: 'NONE' | 'SCHEDULED' | 'SEQUENTIAL';
  certificateEnabled: boolean;
  estimatedDuration: number | null;
  passingScore: number | null;
  maxEnrollments: number | null;
  ownerId: string;
}

export interface CatalogueCourse extends Course {
  lessonCount: number;
  enrollmentCount: number;
  seatsLeft: number | null;
  enrollmentStatus: 'ACTIVE' | 'DROPPED' | 'COMPLETED' | null;
  averageRating: number | null;
  reviewCount: number;
}

export interface Enrollment {
  id: string;
  courseId: string;
  studentId: string;
  status: 'ACTIVE' | 'DROPPED' | 'COMPLETED';
  progress: number;
  finalScore: number | null;
  enrolledAt: string;
  completedAt: string | null;
  lastAccessedAt: string | null;
}

export interface MyCourse extends Enrollment {
  course: Course & { lessonCount: number };
}

export interface OutlineLesson {
  id: string;
  title: string;
  type: LessonType;
  isRequired: boolean;
  durationSeconds: number | null;
  completed: boolean;
  progressPercent: number;
  locked: boolean;
  unlocksAt: string | null;
  lockReason: 'UNLOCK_AT' | 'UNLOCK_AFTER_DAYS' | 'SEQUENTIAL' | null;
}

export interface Outline {
  course: Course;
  enrollment: Enrollment | null;
  modules: Array<{ id: string; title: string; lessons: OutlineLesson[] }>;
  lessonsWithoutModule: OutlineLesson[];
}

export interface Lesson {
  id: string;
  courseId: string;
  moduleId: string | null;
  title: string;
  type: LessonType;
  order: number;
  content: string | null;
  videoUrl: string | null;
  durationSeconds: number | null;
  isRequired: boolean;
  unlockAfterDays: number | null;
  unlockAt: string | null;
  updatedAt: string;
}

export interface LessonView {
  lesson: Lesson;
  progress: { completed: boolean; progressPercent: number; positionSeconds: number | null } | null;
  previousLessonId: string | null;
  nextLessonId: string | null;
}

export interface CaptionTrack {
  id: string;
  language: string;
  label: string;
  vttUrl: string;
  isDefault: boolean;
}

export interface Note {
  id: string;
  lessonId: string;
  content: string;
  timestampSeconds: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface MyNote extends Note {
  lessonTitle: string;
  courseId: string;
  courseTitle: string;
}

export interface Bookmark {
  id: string;
  lessonId: string;
  timestampSeconds: number;
  label: string | null;
  createdAt: string;
}

export interface MyBookmark extends Bookmark {
  lessonTitle: string;
  courseId: string;
  courseTitle: string;
  timestampLabel: string;
}

export interface QuizQuestion {
  id: string;
  type: 'SINGLE_CHOICE' | 'MULTIPLE_CHOICE' | 'TRUE_FALSE' | 'SHORT_ANSWER' | 'NUMERIC';
  prompt: string;
  options?: Array<{ id: string; text: string }>;
  points: number;
}

export interface Quiz {
  id: string;
  title: string;
  description: string | null;
  passingScore: number;
  maxAttempts: number | null;
  timeLimitMinutes: number | null;
  questionCount: number;
  totalPoints: number;
  questions: QuizQuestion[] | null;
  myAttempts: {
    used: number;
    remaining: number | null;
    passed: boolean;
    bestPercentage: number | null;
    inProgress: { id: string; attemptNumber: number; startedAt: string; deadlineAt: string | null } | null;
  } | null;
}

export interface QuizAttempt {
  id: string;
  attemptNumber: number;
  status: 'IN_PROGRESS' | 'SUBMITTED' | 'EXPIRED';
  startedAt: string;
  deadlineAt: string | null;
  score: number | null;
  maxScore: number | null;
  percentage: number | null;
  passed: boolean | null;
  results: Array<{ questionId: string; correct: boolean; pointsAwarded: number; points: number }> | null;
}

export interface RubricCriterion {
  id: string;
  title: string;
  description: string;
  maxPoints: number;
  order: number;
}

export interface Rubric {
  id: string;
  title: string;
  totalPoints: number;
  criteria: RubricCriterion[];
}

export interface SubmissionFile {
  fileId: string;
  name: string;
  url: string;
}

export interface Submission {
  id: string;
  studentId: string;
  textContent: string | null;
  files: SubmissionFile[];
  isLate: boolean;
  status: 'SUBMITTED' | 'GRADED';
  score: number | null;
  instructorScore: number | null;
  peerScoreAverage: number | null;
  peerReviewsCompleted: number;
  feedback: string | null;
  gradedAt: string | null;
  submittedAt: string;
  studentName?: string;
}

export interface Assignment {
  id: string;
  courseId: string;
  courseTitle: string;
  title: string;
  instructions: string;
  maxScore: number;
  passingScore: number | null;
  dueDate: string;
  allowLate: boolean;
  isPeerAssessed: boolean;
  peerReviewCount: number;
  rubric: Rubric | null;
  mySubmission?: Submission | null;
}

export interface PeerReviewItem {
  id: string;
  status: 'PENDING' | 'SUBMITTED' | 'FLAGGED';
  score: number | null;
  assignedAt: string;
  assignment: { id: string; title: string; maxScore: number; dueDate: string; courseTitle: string };
  submission: { id: string; submittedAt: string; textContentPreview: string; fileCount: number };
}

export interface PeerReviewDetail {
  peerReview: { id: string; status: 'PENDING' | 'SUBMITTED' | 'FLAGGED'; score: number | null; rubricScores: Record<string, number>; feedback: string | null };
  assignment: { id: string; title: string; instructions: string; maxScore: number; courseTitle: string };
  rubric?: Rubric;
  submission: { id: string; submittedAt: string; textContent: string | null; files: Array<{ id: string; name: string; url: string }>; isLate: boolean };
}

export interface Certificate {
  id: string;
  courseTitle: string;
  certificateNumber: string;
  verificationCode: string;
  finalScore: number | null;
  issuedAt: string;
  expiresAt: string | null;
  pdfUrl: string | null;
}

export interface Child {
  studentId: string;
  /** Null while the child has no portal Contact row yet: the overview is then asked by studentId. */
  contactId: string | null;
  name: string | null;
  class: string | null;
  section: string | null;
  relation: string | null;
}

export interface ChildOverview {
  child: Child;
  courses: Array<{
    enrollmentId: string;
    courseId: string;
    courseTitle: string;
    progress: number;
    status: string;
    finalScore: number | null;
    passed: boolean | null;
    totalLessons: number;
  }>;
  recentGrades: Array<{
    submissionId: string;
    assignmentName: string;
    courseTitle: string;
    score: number;
    maxScore: number;
    percentage: number;
    passed: boolean;
    gradedAt: string | null;
  }>;
  upcomingAssignments: Array<{ assignmentId: string; title: string; courseTitle: string; dueDate: string; maxScore: number }>;
  liveClasses: {
    attendedThisMonth: number;
    missedThisMonth: number;
    upcoming: Array<{ sessionId: string; title: string; courseTitle: string; scheduledAt: string; durationMinutes: number }>;
  };
  gamification: { currentStreak: number; longestStreak: number; totalPoints: number; totalBadges: number };
  certificates: Array<{ id: string; certificateNumber: string; courseTitle: string; issuedAt: string; pdfUrl: string | null }>;
}

export interface AppNotification {
  id: string;
  title: string;
  message: string;
  key: string;
  category: string;
  actionUrl: string | null;
  isRead: boolean;
  createdAt: string;
}

export type Frequency = 'IMMEDIATE' | 'DAILY_DIGEST' | 'WEEKLY_DIGEST' | 'OFF';
export type Weekday = 'SUNDAY' | 'MONDAY' | 'TUESDAY' | 'WEDNESDAY' | 'THURSDAY' | 'FRIDAY' | 'SATURDAY';

export interface Preferences {
  categories: Array<{
    category: string;
    definitions: Array<{ key: string; label: string; description: string; defaultChannels: string[]; canDisable: boolean; canChangeFrequency: boolean; parentKey: string | null }>;
  }>;
  preferences: Record<string, { emailEnabled: boolean; pushEnabled: boolean; inAppEnabled: boolean; frequency: Frequency }>;
  digestTimes: { dailyTime: string; weeklyDay: Weekday; weeklyTime: string; timezone: string; timezoneOverride: string | null };
  hasPushToken: boolean;
}

export interface LiveSession {
  id: string;
  courseId: string;
  title: string;
  scheduledAt: string;
  durationMinutes: number;
  hostId: string;
  status: 'SCHEDULED' | 'LIVE' | 'COMPLETED';
  recordingStatus: 'PENDING' | 'RECORDING' | 'PROCESSING' | 'READY' | 'FAILED' | null;
  recordingUrl: string | null;
  recordingDuration: number | null;
}

export interface CourseEnrollment extends Enrollment {
  studentName: string;
}
