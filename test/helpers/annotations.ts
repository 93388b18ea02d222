/**
 * Set-up shared by the tests of my notes and my bookmarks: a teacher's two courses in the demo
 * institution (`lessonsInCourse` lessons in the first, one in the other), the given students
 * enrolled in both, a token for each (and for the teacher), and API calls that add a note or a
 * bookmark as a student.
 */
import type { Course, Lesson } from '../../src/modules/courses/courses.tables.js';
import type { TestApp } from './app.js';
import { expectOk } from './expect.js';
import { createCourse, createLesson, enroll } from './factories.js';

export const ANNOTATIONS_INST = 'inst_demo';
const TEACHER = 'u_demo_teacher';

export interface AnnotationCourses {
  course: Course;
  other: Course;
  lessons: Lesson[];
  otherLesson: Lesson;
  /** Session tokens by student id, and `teacher`. */
  tokens: Record<string, string>;
}

export async function twoCoursesWithStudents(t: TestApp, students: string[], lessonsInCourse = 1, titles = ['Counted', 'Other']): Promise<AnnotationCourses> {
  const course = await createCourse(t, { institutionId: ANNOTATIONS_INST, ownerId: TEACHER, title: titles[0] });
  const other = await createCourse(t, { institutionId: ANNOTATIONS_INST, ownerId: TEACHER, title: titles[1] });
  const lessons: Lesson[] = [];
  for (let i = 0; i < lessonsInCourse; i++) lessons.push(await createLesson(t, { courseId: course.id, type: 'VIDEO', order: i + 1 }));
  const otherLesson = await createLesson(t, { courseId: other.id, type: 'VIDEO' });
  const tokens: Record<string, string> = {};
  for (const s of students) {
    await enroll(t, { courseId: course.id, studentId: s });
    await enroll(t, { courseId: other.id, studentId: s });
    tokens[s] = await t.token({ role: 'STUDENT', id: s });
  }
  tokens.teacher = await t.token({ role: 'TEACHER', id: TEACHER });
  return { course, other, lessons, otherLesson, tokens };
}

export const addNote = async (t: TestApp, token: string | undefined, lesson: Lesson, content = 'a note') =>
  expectOk(await t.request('POST', `/api/lessons/${lesson.id}/notes`, { token, body: { content } }), 201) as { id: string };

export const addBookmark = async (t: TestApp, token: string | undefined, lesson: Lesson, label = 'here') =>
  expectOk(await t.request('POST', `/api/lessons/${lesson.id}/bookmarks`, { token, body: { timestampSeconds: 5, label } }), 201) as { id: string };
