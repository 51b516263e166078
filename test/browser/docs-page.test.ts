/**
 * The API reference page (`/docs`) that `npm start` serves, opened in a real headless Chromium (Debian's
 * `chromium` package driven by playwright-core). Where no browser is installed the browser part is skipped with a
 * printed notice; on CI (`CI` set) a missing browser fails instead, because .ci/run installs one.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, resourcePaths } from '../../contract/routes.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && !process.env.CI) {
  console.warn(
    `NOTICE: ${CHROMIUM} not found: skipping the /docs browser test (install it: apt-get install -y chromium)`,
  );
}

let api: TestApi;
let origin: string;
beforeAll(async () => {
  api = await startTestApi();
  origin = new URL(api.url).origin;
});
afterAll(() => api?.close());

describe('/docs over HTTP', () => {
  it('redirects /docs to /docs/ and serves the page without a key, with a same-origin-only CSP', async () => {
    const bare = await fetch(`${origin}/docs`, { redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/docs/');
    const page = await fetch(`${origin}/docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//); // every asset from this server: no CDN
    expect(html).toContain('swagger-ui-bundle.js');
  });

  it('serves openapi.json with this server listed first, so "Try it out" calls it', async () => {
    const res = await fetch(`${origin}/docs/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { servers: Array<{ url: string }>; paths: Record<string, unknown> };
    expect(doc.servers[0]!.url).toBe('/v1');
    expect(Object.keys(doc.paths)).toEqual([...resourcePaths().keys()]);
  });

  it('leaves an unknown file below /docs to the gateway: its 404 Error object', async () => {
    const res = await fetch(`${origin}/docs/nope.js`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'not_found', status: 404 });
  });
});

describe.skipIf(!haveBrowser && !process.env.CI)('/docs in headless Chromium', () => {
  let profile: string;
  let context: BrowserContext;
  let page: Page;
  const requested: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: .ci/run installs Debian's chromium package`).toBe(true);
    profile = mkdtempSync(join(tmpdir(), 'docs-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
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
      ],
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('request', (r) => requested.push(r.url()));
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`${origin}/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
  });
  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('renders every operation, the deprecated ones marked', async () => {
    const ops = page.locator('.opblock');
    const ids = await page.locator('.opblock-summary-operation-id').allInnerTexts();
    expect(ids.map((s) => s.trim()).sort()).toEqual(ROUTES.map((r) => r.operationId).sort());
    await expect.poll(() => ops.count()).toBe(ROUTES.length);
    expect(ROUTES.some((r) => r.deprecation)).toBe(true);
    for (const route of ROUTES) {
      const op = page.locator('.opblock', {
        has: page.locator('.opblock-summary-operation-id', { hasText: new RegExp(`^${route.operationId}$`) }),
      });
      const classes = await op.getAttribute('class');
      if (route.deprecation) expect(classes, route.operationId).toContain('opblock-deprecated');
      else expect(classes, route.operationId).not.toContain('opblock-deprecated');
    }
  });

  it('shows the plans, the deprecation dates and the bearer scheme', async () => {
    const overview = page.locator('.information-container');
    await expect.poll(() => overview.innerText()).toContain('Plans and rate limits');
    const rows = await overview.locator('table tr').allInnerTexts();
    expect(rows.map((r) => r.replace(/\s+/g, ' ').trim())).toEqual([
      'Plan Requests per minute Requests per day',
      'Free 60 1,000',
      'Pro 300 10,000',
      'Business 1,000 100,000',
      'Enterprise agreed per key agreed per key',
    ]);
    expect(await overview.innerText()).toContain('sunset 2030-12-05');
    await page.locator('button.authorize').first().click();
    const dialog = page.locator('.auth-container');
    await expect.poll(() => dialog.first().innerText()).toMatch(/bearerAuth\s*\(http, Bearer\)/);
  });

  it('loads everything from this server (no CDN, no outside validator) without script errors', () => {
    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'))).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
