/// <reference lib="dom" />
/**
 * Browser helpers of the e2e tests: Debian's chromium driven by playwright-core (no browser
 * download), sign-in through the app's development sign-in page, axe-core checks and screenshots.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Where screenshots go: test-results/e2e by default; `npm run screenshots` points it at docs/screenshots. */
export const SCREENSHOT_DIR = resolve(process.env.E2E_SCREENSHOT_DIR || 'test-results/e2e');

/**
 * Headless chromium, quiet: no first-run, sync, component updates or background traffic. Playwright
 * gives every launch a fresh temporary --user-data-dir of its own (it refuses one in `args`).
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
}

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 900 };

/** A fresh browser context (its own cookies) signed in as a CRM simulator person through the sign-in page. */
export async function signedIn(
  browser: Browser,
  baseUrl: string,
  personId: string,
  opts: { viewport?: { width: number; height: number }; beforeSignIn?: (page: Page) => Promise<void> } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport: opts.viewport ?? DESKTOP, locale: 'en-GB', timezoneId: 'UTC' });
  const page = await context.newPage();
  page.on('pageerror', (err) => console.error(`[browser ${personId}] ${err.message}`));
  await page.goto('/sign-in');
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  await page.locator(`button[aria-describedby="detail-${personId}"]`).waitFor();
  await opts.beforeSignIn?.(page);
  await page.locator(`button[aria-describedby="detail-${personId}"]`).click();
  // Signing in loads the start page of the person's role, whose header names them.
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  return { context, page };
}

const require = createRequire(import.meta.url);
let axeSource: string | undefined;

/** axe-core over the page as it is: no serious or critical violation (all of them printed otherwise). */
export async function expectAccessible(page: Page, what: string) {
  axeSource ??= await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run: (ctx: Document, opts: object) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }> };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious, `axe on ${what}:\n${JSON.stringify(serious, null, 2)}`).toEqual([]);
}

/** A full-page screenshot as <name>.png; also checks the page does not scroll sideways (phone layouts). */
export async function screenshot(page: Page, name: string) {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, `${name} scrolls sideways by ${overflow}px`).toBeLessThanOrEqual(0);
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** The unread count the bell announces ("Notifications, 3 unread"). */
export async function bellCount(page: Page): Promise<number> {
  const label = (await page.getByTestId('bell').getAttribute('aria-label')) ?? '';
  const m = /(\d+) unread/.exec(label);
  if (!m) throw new Error(`unexpected bell label: ${label}`);
  return Number(m[1]);
}
