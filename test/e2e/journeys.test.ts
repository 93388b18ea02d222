/// <reference lib="dom" />
/**
 * The web app in a real browser against the real service (`npm start`'s build and process, see
 * global-setup.ts): the five journeys of issue 18, in order, each person in a context of their
 * own signed in through the development sign-in page. Every journey saves screenshots and runs
 * axe-core on the pages it shows (no serious or critical violation). A last test checks that the
 * course editor lists a lesson that is in no module.
 *
 * Demo data (src/dev/seed.ts): Algebra Foundations (published) with a video lesson with English
 * (default) and Spanish captions and a peer-reviewed assignment with a rubric; students 01–12 are
 * enrolled; parent 01 has students 01 and 02.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bellCount, expectAccessible, launchBrowser, PHONE, screenshot, signedIn } from './browser.js';

const ALGEBRA = 'seed_inst_demo_algebra';
const ASSIGNMENT_LESSON = `${ALGEBRA}_assignment`;
const NEWCOMER = 'c_demo_stu_20'; // not enrolled in algebra
const AUTHOR = 'c_demo_stu_01';
const PEER = 'c_demo_stu_02';
const PARENT = 'c_demo_par_01'; // parent of students 01 and 02
const TEACHER = 'u_demo_teacher';

/** The main navigation of the page's header. */
const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

let browser: Browser;
let baseUrl: string;
let names: Record<string, string>;

beforeAll(async () => {
  baseUrl = inject('e2eBaseUrl');
  browser = await launchBrowser();
  const people = (await (await fetch(`${baseUrl}/api/dev/people`)).json()).data as Array<{ personId: string; name: string }>;
  names = Object.fromEntries(people.map((p) => [p.personId, p.name]));
});

afterAll(async () => {
  await browser?.close();
});

describe('web app journeys', () => {
  it('a student enrolls, watches with captions, adds a timestamped note and finds it by search', async () => {
    const { context, page } = await signedIn(browser, baseUrl, NEWCOMER, {
      beforeSignIn: async (signInPage) => {
        await screenshot(signInPage, 'sign-in');
        await expectAccessible(signInPage, 'the sign-in page');
      },
    });
    // The first Tab reaches the skip link, which moves the focus to the page's content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await nav(page).getByRole('link', { name: 'Catalogue' }).click();
    await page.getByRole('button', { name: 'Enroll in Algebra Foundations' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'You are enrolled in Algebra Foundations' }).count()).toBe(1);
    await screenshot(page, 'catalogue');
    await expectAccessible(page, 'the catalogue');

    await page.getByRole('link', { name: 'Open course Algebra Foundations' }).click();
    await page.getByRole('heading', { name: 'Algebra Foundations', level: 1 }).waitFor();
    await expectAccessible(page, 'the course outline');
    await page.getByRole('link', { name: 'Welcome to algebra' }).click();
    await page.getByRole('heading', { name: 'Welcome to algebra', level: 1 }).waitFor();

    // The caption tracks are <track>s of the video; the default (English) one is showing.
    const video = page.getByTestId('lesson-video');
    const tracks = await video.evaluate((v: HTMLVideoElement) => Array.from(v.textTracks).map((t) => ({ label: t.label, language: t.language, mode: t.mode })));
    expect(tracks).toEqual([
      { label: 'English', language: 'en', mode: 'showing' },
      { label: 'Español', language: 'es', mode: 'disabled' },
    ]);
    // Watch past four seconds: the second English cue is the one on screen.
    await video.evaluate((v: HTMLVideoElement) => {
      v.muted = true;
      return v.play();
    });
    await expect
      .poll(() => video.evaluate((v: HTMLVideoElement) => (v.currentTime > 4.5 ? Array.from(v.textTracks[0]!.activeCues ?? []).map((c) => (c as VTTCue).text) : null)), {
        timeout: 20_000,
      })
      .toEqual(['A variable stands for a number we do not know yet.']);
    await video.evaluate((v: HTMLVideoElement) => v.pause());
    const at = await video.evaluate((v: HTMLVideoElement) => Math.floor(v.currentTime));

    // A note at the current time, listed with its timestamp; clicking it seeks there.
    await page.getByLabel('New note').fill('Variables stand for unknown numbers');
    await page.getByRole('button', { name: 'Add note' }).click();
    const stamp = `0:${String(at).padStart(2, '0')}`;
    const jump = page.getByRole('button', { name: `Play from ${stamp}` });
    await jump.waitFor();
    await video.evaluate((v: HTMLVideoElement) => {
      v.currentTime = 0;
    });
    await jump.click();
    await expect.poll(() => video.evaluate((v: HTMLVideoElement) => Math.floor(v.currentTime))).toBe(at);
    await page.getByRole('button', { name: 'Bookmark this moment' }).click();
    await page.getByRole('list', { name: 'Bookmarks on the timeline' }).getByRole('button', { name: stamp }).waitFor();
    await screenshot(page, 'lesson-player');
    await expectAccessible(page, 'the lesson player');

    // My notes: found by a word of it, with a link back to the moment; not found by another.
    await nav(page).getByRole('link', { name: 'Notes' }).click();
    await page.getByLabel('Search notes').fill('unknown');
    await page.getByRole('button', { name: 'Search' }).click();
    const results = page.getByRole('list', { name: 'Notes matching unknown' });
    await results.waitFor();
    expect(await results.getByRole('listitem').count()).toBe(1);
    await expect.poll(() => results.getByRole('link').getAttribute('href')).toBe(`/courses/${ALGEBRA}/lessons/${ALGEBRA}_welcome?t=${at}`);
    expect(await results.textContent()).toContain('Variables stand for unknown numbers');
    await screenshot(page, 'my-notes');
    await expectAccessible(page, 'my notes');
    await page.getByLabel('Search notes').fill('photosynthesis');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No notes match “photosynthesis”.').waitFor();

    // An API failure shows its message, not an endless spinner.
    await page.route('**/api/certificates*', (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ data: null, error: { code: 'SERVICE_UNAVAILABLE', message: 'The database is unavailable' } }),
      }),
    );
    await nav(page).getByRole('link', { name: 'Certificates' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 }).toContain('The database is unavailable');
    await context.close();
  });

  it('a student submits an assignment and a peer reviews it anonymously', async () => {
    const submit = async (personId: string, text: string, fileName: string) => {
      const { context, page } = await signedIn(browser, baseUrl, personId);
      await page.goto(`/courses/${ALGEBRA}/lessons/${ASSIGNMENT_LESSON}`);
      await page.getByRole('heading', { name: 'Solve five equations', level: 2 }).waitFor();
      await page.getByLabel('Your answer').fill(text);
      await page.getByLabel('Files').setInputFiles({ name: fileName, mimeType: 'text/plain', buffer: Buffer.from(`${text}\n`) });
      await page.getByRole('button', { name: 'Submit', exact: true }).click();
      await page.getByText('Your work was submitted.').waitFor();
      return { context, page };
    };
    const peer = await submit(PEER, 'x = 4, x = 5, x = 5, x = 12, x = 3', 'my-answers.txt');
    await peer.context.close();
    // The author's file name carries their name: the reviewer must not see it.
    const authorName = names[AUTHOR]!;
    const author = await submit(AUTHOR, '1. x = 7 - 3 = 4\n2. x = 10 / 2 = 5\n3. 3x = 15, x = 5\n4. x = 12\n5. 2x = 6, x = 3', `${authorName.replace(' ', '-')}-solutions.txt`);
    await screenshot(author.page, 'assignment');
    await expectAccessible(author.page, 'the assignment lesson');
    await author.context.close();

    // Two submitters with one review each: the peer reviews the author's work.
    const { context, page } = await signedIn(browser, baseUrl, PEER);
    await nav(page).getByRole('link', { name: 'Peer reviews' }).click();
    await page.getByText('1 to do.').waitFor();
    await expectAccessible(page, 'the peer-review queue');
    await page.getByRole('link', { name: /Solve five equations/ }).click();
    await page.getByRole('heading', { name: 'Review: Solve five equations', level: 1 }).waitFor();
    const body = (await page.locator('main').textContent()) ?? '';
    expect(body).toContain('x = 10 / 2 = 5');
    expect(body).not.toContain(authorName);
    expect(body).not.toContain(AUTHOR);
    expect(body).toContain('author hidden');
    await page.getByLabel(/Correct answers/).fill('5');
    await page.getByLabel(/Working shown/).fill('3');
    await page.getByLabel('Feedback for the author').fill('Good working; check equation 1.');
    await screenshot(page, 'peer-review');
    await expectAccessible(page, 'the peer-review form');
    await page.getByRole('button', { name: 'Submit review' }).click();
    await page.getByText('Review submitted: 8 of 10.').waitFor();
    await context.close();
  });

  it('a teacher grades the submission', async () => {
    const { context, page } = await signedIn(browser, baseUrl, TEACHER);
    await page.getByRole('link', { name: 'Algebra Foundations' }).click();
    await page.getByRole('heading', { name: 'Modules and lessons' }).waitFor();
    await page.getByRole('table').first().getByRole('row').nth(1).waitFor(); // the enrollments
    await screenshot(page, 'course-editor');
    await expectAccessible(page, 'the course editor');
    await page.getByRole('link', { name: 'Submissions and grading' }).click();
    await page.getByRole('heading', { name: 'Grading: Solve five equations', level: 1 }).waitFor();
    // The moderation view names the reviewer; the author's work has its peer score.
    const moderation = page.getByRole('region', { name: 'Peer reviews' });
    await moderation.getByText(names[PEER]!).first().waitFor();
    const form = page.getByRole('form', { name: `Grade ${names[AUTHOR]}` });
    await form.getByLabel(/Score/).fill('9');
    await form.getByLabel('Feedback').fill('Clear working throughout.');
    await form.getByRole('button').click();
    await page.getByText('Grade saved: 9 points.').waitFor();
    await screenshot(page, 'grading');
    await expectAccessible(page, 'the grading page');
    await context.close();
  });

  it('a parent sees the grade on the child’s overview (phone-sized screen)', async () => {
    const { context, page } = await signedIn(browser, baseUrl, PARENT, { viewport: PHONE });
    await page.getByRole('heading', { name: 'My children', level: 1 }).waitFor();
    await page.getByRole('link', { name: names[AUTHOR]! }).click();
    await page.getByRole('heading', { name: names[AUTHOR]!, level: 1 }).waitFor();
    const grades = page.getByRole('list', { name: 'Recent grades' });
    await grades.waitFor();
    const grade = grades.getByRole('listitem').filter({ hasText: 'Solve five equations' });
    expect(await grade.textContent()).toMatch(/9 of 10 \(90%\)\s*passed/);
    await screenshot(page, 'parent-overview');
    await expectAccessible(page, 'the child overview');
    await context.close();
  });

  it('the bell count rises when a notification arrives (polled every 30 s, paused while the tab is hidden)', async () => {
    const student = await browser.newContext({ baseURL: baseUrl, viewport: { width: 1280, height: 900 } });
    const page = await student.newPage();
    // A fake clock, so the 30-second poll can be run on demand.
    await page.clock.install();
    await page.goto('/sign-in');
    await page.locator(`button[aria-describedby="detail-${AUTHOR}"]`).click();
    await page.getByRole('heading', { name: 'My courses', level: 1 }).waitFor();
    await expect.poll(() => bellCount(page)).toBeGreaterThan(0); // the grade and peer-review notifications
    const before = await bellCount(page);

    // The teacher posts announcements to the course: one in-app notification to each student.
    const teacher = await signedIn(browser, baseUrl, TEACHER);
    const announce = async (title: string) => {
      const status = await teacher.page.evaluate(
        async ([courseId, t]) =>
          (
            await fetch(`/api/courses/${courseId}/announcements`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ title: t, body: 'Revise expressions and equations.' }),
            })
          ).status,
        [ALGEBRA, title] as const,
      );
      expect(status).toBe(201);
    };
    const setVisibility = (state: 'hidden' | 'visible') =>
      page.evaluate((s) => {
        Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => s });
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => s === 'hidden' });
        document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
      }, state);

    // While the tab is hidden nothing is polled, however long it stays hidden.
    await setVisibility('hidden');
    await announce('Quiz on Friday');
    await page.clock.fastForward(90_000);
    expect(await bellCount(page)).toBe(before);
    // Shown again: the count is fetched at once.
    await setVisibility('visible');
    await expect.poll(() => bellCount(page)).toBe(before + 1);
    // Visible: the next notification shows at the next 30-second poll, not before.
    await announce('Bring a calculator');
    expect(await bellCount(page)).toBe(before + 1);
    await page.clock.fastForward(30_000);
    await expect.poll(() => bellCount(page)).toBe(before + 2);
    await teacher.context.close();
    await screenshot(page, 'my-courses');
    await expectAccessible(page, 'my courses');

    await page.getByTestId('bell').click();
    await page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();
    await page.getByRole('list', { name: 'Notifications' }).getByText('Quiz on Friday').first().waitFor();
    await screenshot(page, 'notifications');
    await expectAccessible(page, 'the notification list');
    await page.getByRole('button', { name: 'Mark all as read' }).click();
    await expect.poll(() => bellCount(page)).toBe(0);
    await student.close();
  });

  it('a teacher’s lesson in no module stays in the course editor', async () => {
    const { context, page } = await signedIn(browser, baseUrl, TEACHER);
    const created = await page.evaluate(async () => {
      const res = await fetch('/api/courses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Geometry drafts' }) });
      return { status: res.status, id: (await res.json()).data?.id as string };
    });
    expect(created.status).toBe(201);
    await page.goto(`/teach/courses/${created.id}`);
    await page.getByRole('heading', { name: 'Modules and lessons' }).waitFor();
    // A course without modules offers only "No module".
    await page.getByLabel('New lesson title').fill('Angles at a point');
    await page.getByRole('button', { name: 'Add lesson' }).click();
    const unfiled = page.getByRole('region', { name: 'Without a module' });
    await unfiled.getByRole('link', { name: 'Angles at a point' }).waitFor();
    await expectAccessible(page, 'the course editor with a lesson in no module');
    await context.close();
  });
});
