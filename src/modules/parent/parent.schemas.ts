import { z } from 'zod';

export const childParams = z.object({ childId: z.string().min(1).max(200) });

/**
 * A child as the CRM lists it (spec 2.11: absent fields null), with the session's institution.
 * The answer's own schema: the CRM's (platform/crm/types.ts) also reads absent fields as null.
 */
export const childSchema = z.object({
  studentId: z.string(),
  contactId: z.string().nullable().describe('null while the child has no portal Contact row yet; its overview is then asked by studentId'),
  name: z.string().nullable(),
  email: z.string().nullable(),
  studentCode: z.string().nullable(),
  class: z.string().nullable(),
  section: z.string().nullable(),
  photoUrl: z.string().nullable(),
  status: z.string().nullable(),
  relation: z.string().nullable(),
  isPrimary: z.boolean(),
  institutionId: z.string(),
});

export const childrenSchema = z.object({ children: z.array(childSchema) });

export const overviewSchema = z.object({
  child: childSchema.pick({ contactId: true, studentId: true, name: true, email: true, studentCode: true, class: true, section: true, photoUrl: true, relation: true }),
  courses: z.array(
    z.object({
      enrollmentId: z.string(),
      courseId: z.string(),
      courseTitle: z.string(),
      thumbnailUrl: z.string().nullable(),
      progress: z.number(),
      status: z.string(),
      finalScore: z.number().nullable(),
      passed: z
        .boolean()
        .nullable()
        .describe('finalScore ≥ the course’s passingScore; when either is missing, true for a COMPLETED enrollment (the rule that issues its certificate), else null'),
      lastAccessedAt: z.string().nullable(),
      completedAt: z.string().nullable(),
      totalLessons: z.number().int(),
      estimatedDuration: z.number().nullable().describe('minutes: the course estimate, else the sum of its lessons’ durations'),
    }),
  ),
  recentGrades: z.array(
    z.object({
      submissionId: z.string(),
      assignmentId: z.string(),
      assignmentName: z.string(),
      courseId: z.string(),
      courseTitle: z.string(),
      score: z.number().nullable().describe('the final score when present, else the instructor’s, else the peer average; null when none is known'),
      maxScore: z.number(),
      passingScore: z.number().nullable(),
      percentage: z.number().nullable().describe('score / maxScore × 100, rounded to 2 places; null when the score is unknown'),
      passed: z.boolean().nullable().describe('score ≥ passingScore; null when the assignment has no passing score or the score is unknown'),
      gradedAt: z.string().nullable(),
      status: z.string(),
    }),
  ),
  upcomingAssignments: z.array(z.object({ assignmentId: z.string(), title: z.string(), courseId: z.string(), courseTitle: z.string(), dueDate: z.string(), maxScore: z.number() })),
  liveClasses: z.object({
    attendedThisMonth: z.number().int(),
    missedThisMonth: z.number().int(),
    upcoming: z.array(z.object({ sessionId: z.string(), title: z.string(), courseId: z.string(), courseTitle: z.string(), scheduledAt: z.string(), durationMinutes: z.number() })),
  }),
  gamification: z.object({ currentStreak: z.number().int(), longestStreak: z.number().int(), totalPoints: z.number().int(), totalBadges: z.number().int() }),
  certificates: z.array(
    z.object({
      id: z.string(),
      certificateNumber: z.string(),
      verificationCode: z.string(),
      courseTitle: z.string(),
      issuedAt: z.string(),
      expiresAt: z.string().nullable(),
      pdfUrl: z.string().nullable(),
    }),
  ),
});
