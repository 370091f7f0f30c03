// The status page in a real browser: Debian's chromium driven by playwright-core loads GET /status without a
// console error and shows a book the simulator was told to stall (SIM_STALL) as stale. Skipped, with the reason
// printed, on a machine without /usr/bin/chromium; under CI (CI=true, where .ci/run installs it) it must run.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startTestApp } from './helpers/app.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

const missing = existsSync(CHROMIUM) ? '' : `${CHROMIUM} is not installed (apt-get install -y chromium; .ci/run installs it)`;
if (missing !== '' && process.env.CI !== 'true') console.log(`# skipping the status page browser test: ${missing}`);

t.test('status page - loads without console errors and shows a stalled book as stale', { skip: process.env.CI === 'true' ? false : missing || false }, async (t) => {
  if (missing !== '') {
    t.fail(`CI=true but ${missing}`);
    return;
  }
  const { chromium } = await import('playwright-core');
  const app = await startTestApp(t, { feeds: ['sim'], simStall: ['draftkings'], simRate: 200, shards: 1, status: { sampleMs: 500 } });
  // a sample or two for the 24-hour strips
  await new Promise((r) => setTimeout(r, 1200));
  const profile = mkdtempSync(join(tmpdir(), 'lw-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 60_000 });
  t.teardown(async () => {
    await browser.close().catch(() => undefined);
    rmSync(profile, { recursive: true, force: true });
  });
  const page = browser.pages()[0] ?? await browser.newPage();
  const errors: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  page.on('response', (r) => { if (r.status() >= 400) errors.push(`HTTP ${r.status()}: ${r.url()}`); });

  const res = await page.goto(`${app.base}/status`, { waitUntil: 'load', timeout: 30_000 });
  t.equal(res?.status(), 200, 'GET /status: 200');
  const badge = page.locator('tr[data-source="draftkings"] .cls');
  await badge.waitFor({ timeout: 30_000 });
  t.equal(await badge.textContent(), 'stale', 'the stalled book reads stale');
  t.match(await badge.getAttribute('class'), /\bstale\b/, 'in the stale colour');
  const fanduel = await page.locator('tr[data-source="fanduel"] .cls').textContent();
  t.not(fanduel, 'stale', `a quoted book is not stale (${fanduel})`);
  t.match(await page.locator('#summary').textContent(), /stale sources: [1-9]/, 'the summary counts the stale sources');
  t.ok(await page.locator('#feeds tr').count() >= 1, 'the feeds table lists the simulator');
  t.ok(await page.locator('#simulated').isVisible(), 'a banner says the sources are the simulator\'s (regression: nothing did)');
  t.ok(await page.locator('tr[data-source="fanduel"] .strip span').count() >= 1, 'the 24-hour strip has samples');
  if (process.env.STATUS_PAGE_SCREENSHOT) await page.screenshot({ path: process.env.STATUS_PAGE_SCREENSHOT, fullPage: true });
  t.same(errors, [], 'no console errors, failed requests or error responses');
});
