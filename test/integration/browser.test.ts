import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestService } from '../support/service.js';

const CHROMIUM = '/usr/bin/chromium';

function installed(): boolean {
  try {
    execFileSync(CHROMIUM, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Debian's chromium package, installed when absent (apt lists refreshed if the first try fails); the reason when it cannot be. */
function ensureChromium(): string | undefined {
  if (installed()) return undefined;
  const apt = (...args: string[]) => execFileSync('apt-get', args, { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 600_000 });
  try {
    apt('install', '-y', 'chromium');
  } catch {
    try {
      apt('update');
      apt('install', '-y', 'chromium');
    } catch (error) {
      return `chromium is not installed and apt-get could not install it (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`;
    }
  }
  return installed() ? undefined : 'chromium is still missing after apt-get install';
}

const unavailable = ensureChromium();
if (unavailable) console.warn(`browser tests skipped: ${unavailable}`);

/** A page on another origin: it calls GET /api/events of the service named in its query and shows what happened. */
const PAGE = `<!doctype html><html><body><pre id="out">pending</pre><script>
const api = new URLSearchParams(location.search).get('api');
fetch(api + '/api/events?limit=5', { headers: { 'X-Request-Id': 'from-the-page' } })
  .then(async (r) => { document.getElementById('out').textContent = JSON.stringify({ status: r.status, events: (await r.json()).events.length }); })
  .catch((e) => { document.getElementById('out').textContent = JSON.stringify({ refused: String(e) }); });
</script></body></html>`;

describe.skipIf(unavailable !== undefined)('in a browser (headless Chromium)', () => {
  let page: Server;
  let pageOrigin: string;
  let withCors: TestService;
  let withoutCors: TestService;
  let browser: Browser;

  beforeAll(async () => {
    page = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(PAGE));
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    [withCors, withoutCors] = await Promise.all([TestService.start({ CORS_ORIGINS: pageOrigin }), TestService.start()]);
    await withCors.post('/api/auth/register', { email: 'browser-one@example.com', password: 'correct-horse-battery' });
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all([withCors?.stop(), withoutCors?.stop()]);
    await new Promise((resolve) => page?.close(resolve));
  });

  it('/docs: Authorize with a token, then "Try it out" on GET /api/auth/me answers 200', async () => {
    const { token } = await withCors.register();
    const tab = await browser.newPage();
    try {
      await tab.goto(`${withCors.baseUrl}/docs`, { waitUntil: 'networkidle0' });
      await tab.click('.auth-wrapper .authorize');
      await tab.waitForSelector('.modal-ux input');
      await tab.type('.modal-ux input', token);
      await tab.click('.modal-ux .auth-btn-wrapper .authorize');
      await tab.click('.modal-ux .btn-done');
      await tab.click('#operations-auth-getCurrentAccount .opblock-summary');
      await tab.waitForSelector('#operations-auth-getCurrentAccount .try-out__btn');
      await tab.click('#operations-auth-getCurrentAccount .try-out__btn');
      await tab.click('#operations-auth-getCurrentAccount .execute');
      const status = await tab.waitForSelector('#operations-auth-getCurrentAccount .live-responses-table tbody .response-col_status');
      expect(await status!.evaluate((cell) => cell.textContent?.trim())).toBe('200');
      const body = await tab.$eval('#operations-auth-getCurrentAccount .live-responses-table tbody .response-col_description pre', (pre) => pre.textContent ?? '');
      expect(JSON.parse(body).user.email).toMatch(/@example\.com$/);
      // the request went to the page's own origin (the document's server is /)
      const url = await tab.$eval('#operations-auth-getCurrentAccount .request-url pre', (pre) => pre.textContent ?? '');
      expect(url).toBe(`${withCors.baseUrl}/api/auth/me`);
    } finally {
      await tab.close();
    }
  }, 60_000);

  async function eventsFromAnotherOrigin(service: TestService): Promise<unknown> {
    const tab = await browser.newPage();
    try {
      await tab.goto(`${pageOrigin}/?api=${encodeURIComponent(service.baseUrl)}`);
      await tab.waitForFunction(() => document.getElementById('out')?.textContent !== 'pending', { timeout: 15_000 });
      return JSON.parse(await tab.$eval('#out', (out) => out.textContent ?? ''));
    } finally {
      await tab.close();
    }
  }

  it('a page on another origin reads GET /api/events when CORS_ORIGINS names it, and is refused otherwise', async () => {
    // the page's X-Request-Id makes the browser send a preflight first
    expect(await eventsFromAnotherOrigin(withCors)).toEqual({ status: 200, events: 0 });
    expect(await eventsFromAnotherOrigin(withoutCors)).toEqual({ refused: expect.stringContaining('Failed to fetch') });
  }, 60_000);
});
