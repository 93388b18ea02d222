import { chromium } from 'playwright-core';
const [,, who, ...paths] = process.argv;
const B = 'http://127.0.0.1:3447';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const ctx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
const page = await ctx.newPage();
page.on('console', (m) => { if (m.type() === 'error') console.log('console:', m.text()); });
page.on('pageerror', (e) => console.log('pageerror:', e.message));
await page.goto(B + '/sign-in');
await page.evaluate(async (id) => { await fetch('/api/dev/sign-in', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ personId: id }) }); }, who);
let i = 0;
for (const p of paths) {
  await page.goto(B + p);
  await page.waitForTimeout(1500);
  await page.screenshot({ path: `/tmp/webdev/shot-${i++}.png`, fullPage: true });
}
await browser.close();
