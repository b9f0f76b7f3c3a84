/**
 * The API reference page in a real browser (Debian's Chromium), through the local gateway and
 * through real Kong, with no key: without a click it shows how to send a key, every guide before
 * the four operations and nothing else as an operation; "Try it out" with the demo key gets a 200
 * from the gateway the page came from; it logs no console error and asks no other host for
 * anything; axe-core finds no WCAG A/AA violation. Screenshots are kept under test-artifacts/.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from './browser';
import { DEMO, gatewayKinds, startStackOn, type Stack } from '../../e2e/support';
import type { Parsed } from '../../helpers/parsed';

const ARTIFACTS = path.join(__dirname, '..', '..', '..', 'test-artifacts');
const GUIDE_HEADINGS = [
  'Authentication',
  'Scopes',
  'Errors',
  'Rate limits',
  'Pagination',
  'Keeping a mirror',
  'Webhooks: changes pushed to you',
  'Idempotent creates',
  'Compression',
  'Versioning',
];
const WEBHOOK_OPERATIONS = [
  'createWebhook',
  'listWebhooks',
  'getWebhook',
  'updateWebhook',
  'deleteWebhook',
  'rotateWebhookSecret',
  'replayWebhook',
  'enableWebhook',
  'listWebhookAttempts',
  'testWebhook',
  'jobUpdatedEvent',
  'jobRemovedEvent',
  'feedRestoredEvent',
  'webhookTestEvent',
];
const OPERATIONS = [
  { id: 'listJobs', method: 'GET', path: '/api/v1/jobs' },
  { id: 'createJob', method: 'POST', path: '/api/v1/jobs' },
  { id: 'listJobChanges', method: 'GET', path: '/api/v1/jobs/changes' },
  { id: 'getJob', method: 'GET', path: '/api/v1/jobs/{id}' },
];

describe.each(gatewayKinds())('the reference page through the %s', (kind) => {
  let stack: Stack;
  let browser: Browser;
  let origin: string;
  const requests: Array<{ url: string; headers: Record<string, string> }> = [];
  const elsewhere: string[] = [];
  const errors: string[] = [];
  let page: Page;

  beforeAll(async () => {
    stack = await startStackOn(kind, 'docs_page', { publicUrlIsGateway: true });
    origin = new URL(stack.url).origin;
    browser = await launchChromium();
    // A request to another host is recorded and refused, so the test never reaches the network.
    await browser.context.route('**/*', (route) => {
      const request = route.request();
      requests.push({ url: request.url(), headers: request.headers() });
      if (new URL(request.url()).origin === origin) return route.continue();
      elsewhere.push(request.url());
      return route.abort();
    });
    page = await browser.context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
  }, 120000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  test('without a click: X-API-Key, every guide above the four operations, no other operation, nothing from another host', async () => {
    const response = await page.goto(`${stack.url}/docs`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    for (const op of OPERATIONS) {
      const block = page.locator(`#operations-jobs-${op.id}`);
      await block.waitFor({ state: 'visible', timeout: 30000 });
      await expect(block.locator('.opblock-summary-method').innerText()).resolves.toBe(op.method);
      await expect(block.locator('.opblock-summary-path').getAttribute('data-path')).resolves.toBe(op.path);
    }
    await page.waitForLoadState('networkidle');

    const text = await page.locator('body').innerText();
    expect(text).toContain('X-API-Key');
    const summaries = await page.locator('.opblock-summary').allInnerTexts();
    expect(summaries.filter((summary) => /not supported/i.test(summary))).toEqual([]);
    // The only operations: the four, the mirror check's two, the webhook subscriptions and their events, and the document itself, each GET with its HEAD.
    const ids = await page.locator('.opblock').evaluateAll((blocks) => blocks.map((b) => b.id));
    const MIRROR_CHECK = ['getMirrorDigest', 'listMirrorBucket'];
    const withHeads = (ids: string[], gets: string[]) => [...ids, ...gets.map((id) => `${id}Head`)];
    expect(ids.sort()).toEqual(
      [
        ...withHeads(
          OPERATIONS.map((op) => op.id),
          OPERATIONS.filter((op) => op.method === 'GET').map((op) => op.id),
        ).map((id) => `operations-jobs-${id}`),
        ...withHeads(MIRROR_CHECK, MIRROR_CHECK).map((id) => `operations-jobs-${id}`),
        ...withHeads(WEBHOOK_OPERATIONS, ['listWebhooks', 'getWebhook', 'listWebhookAttempts']).map(
          (id) => `operations-webhooks-${id}`,
        ),
        'operations-meta-getOpenApiDocument',
        'operations-meta-getOpenApiDocumentHead',
      ].sort(),
    );
    // Each guide is a visible heading, in order, above the first operation.
    const firstOperation = (await page.locator('.opblock').first().boundingBox())!.y;
    let previous = 0;
    for (const heading of GUIDE_HEADINGS) {
      const found = page.getByRole('heading', { name: heading, exact: true });
      await expect(found.count()).resolves.toBe(1);
      const y = (await found.boundingBox())!.y;
      expect([heading, y > previous && y < firstOperation]).toEqual([heading, true]);
      previous = y;
    }
    // The servers: this gateway (the configured public address) first.
    await expect(page.locator('.servers select').inputValue()).resolves.toBe(stack.url);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `docs-page-${kind.replace(/ /g, '-')}.png`) });
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
    expect(requests.map((r) => new URL(r.url).pathname).sort()).toEqual(
      expect.arrayContaining([
        '/docs',
        '/docs/openapi.json',
        '/docs/reference.css',
        '/docs/reference.js',
        '/docs/swagger-ui-bundle.js',
        '/docs/swagger-ui.css',
      ]),
    );
    expect(requests.every((r) => new URL(r.url).pathname.startsWith('/docs'))).toBe(true);
  }, 120000);

  test('"Try it out" on GET /api/v1/jobs with the demo key, entered once in Authorize, shows a 200', async () => {
    await page.locator('.btn.authorize').click();
    const dialog = page.locator('.modal-ux');
    await expect(dialog.innerText()).resolves.toContain('X-API-Key');
    // The header's scheme; the query's (api_key, for quick tests) is left empty.
    const header = dialog.locator('form').filter({ hasText: 'apiKey (apiKey)' });
    await header.locator('input').fill(DEMO.reader);
    await header.locator('button.authorize').click();
    await dialog.locator('.btn-done').first().click();

    const block = page.locator('#operations-jobs-listJobs');
    await block.locator('.opblock-summary-control').click();
    await block.locator('.try-out__btn').click();
    await block.locator('.execute').click();
    const status = block.locator('.live-responses-table tbody .response-col_status');
    await status.waitFor({ state: 'visible', timeout: 30000 });
    await expect(status.innerText()).resolves.toMatch(/^200/);
    await expect(block.locator('.live-responses-table tbody .response-col_description').innerText()).resolves.toContain(
      '"totalPages"',
    );

    const call = requests.find((r) => new URL(r.url).pathname === '/api/v1/jobs');
    expect(call?.url.startsWith(`${stack.url}/api/v1/jobs`)).toBe(true);
    expect(call?.headers['x-api-key']).toBe(DEMO.reader);
    expect(new URL(call!.url).searchParams.has('api_key')).toBe(false);
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
  }, 120000);

  test('no WCAG 2 A or AA violation that axe-core can find, with operations collapsed and opened', async () => {
    const axeBrowser = await launchChromium({ bypassCSP: true });
    try {
      const axePage = await axeBrowser.context.newPage();
      await axePage.goto(`${stack.url}/docs`, { waitUntil: 'load' });
      await axePage.locator('#operations-jobs-listJobChanges').waitFor({ state: 'visible', timeout: 30000 });
      await axePage.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
      const audit = () =>
        axePage.evaluate(async () => {
          const axe = (globalThis as Parsed).axe;
          const result = await axe.run((globalThis as Parsed).document, { runOnly: ['wcag2a', 'wcag2aa'] });
          return result.violations.map(
            (v: Parsed) => `${v.impact} ${v.id}: ${v.nodes.map((n: Parsed) => n.target.join(' ')).join(', ')}`,
          );
        });
      expect(await audit()).toEqual([]);
      for (const id of ['listJobChanges', 'createJob']) {
        await axePage.locator(`#operations-jobs-${id} .opblock-summary-control`).click();
        await axePage.locator(`#operations-jobs-${id} .responses-table`).waitFor({ state: 'visible' });
      }
      expect(await audit()).toEqual([]);
    } finally {
      await axeBrowser.close();
    }
  }, 120000);
});
