/**
 * The API reference page in a real browser (Debian's Chromium), through the local gateway serving
 * kong.yaml, with no key: it renders every operation of the document, logs no console error and
 * asks no other host for anything. The screenshot is kept under test-artifacts/.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { launchChromium, type Browser } from './docs-page-browser';
import { startStack, type Stack } from './e2e/support';

const ARTIFACTS = path.join(__dirname, '..', 'test-artifacts');
const OPERATIONS = [
  { id: 'listJobs', method: 'GET', path: '/api/v1/jobs' },
  { id: 'createJob', method: 'POST', path: '/api/v1/jobs' },
  { id: 'listJobChanges', method: 'GET', path: '/api/v1/jobs/changes' },
  { id: 'getJob', method: 'GET', path: '/api/v1/jobs/{id}' },
];

let stack: Stack;
let browser: Browser;
beforeAll(async () => {
  stack = await startStack('docs_page');
  browser = await launchChromium();
}, 60000);
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

test('the page loads through the gateway without a key, shows the four operations, no console error, no other host', async () => {
  const origin = new URL(stack.url).origin;
  const requests: string[] = [];
  const elsewhere: string[] = [];
  const errors: string[] = [];
  // A request to another host is recorded and refused, so the test never reaches the network.
  await browser.context.route('**/*', (route) => {
    const url = route.request().url();
    requests.push(url);
    if (new URL(url).origin === origin) return route.continue();
    elsewhere.push(url);
    return route.abort();
  });
  const page = await browser.context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));

  const response = await page.goto(`${stack.url}/docs`, { waitUntil: 'load' });
  expect(response?.status()).toBe(200);
  for (const op of OPERATIONS) {
    const block = page.locator(`#operations-jobs-${op.id}`);
    await block.waitFor({ state: 'visible', timeout: 30000 });
    await expect(block.locator('.opblock-summary-method').innerText()).resolves.toBe(op.method);
    await expect(block.locator('.opblock-summary-path').getAttribute('data-path')).resolves.toBe(op.path);
  }
  // The key header is documented: the Authorize dialog lists it.
  await page.locator('.btn.authorize').click();
  await expect(page.locator('.modal-ux').innerText()).resolves.toContain('X-API-Key');
  await page.locator('.modal-ux .btn-done').first().click();
  // An operation opens with its error bodies.
  await page.locator('#operations-jobs-createJob .opblock-summary-control').click();
  await page.locator('#operations-jobs-createJob .responses-table').waitFor({ state: 'visible' });
  const created = await page.locator('#operations-jobs-createJob').innerText();
  for (const status of ['201', '400', '401', '403', '409', '413', '415', '422', '429', '503']) expect(created).toContain(status);
  await page.locator('#operations-jobs-createJob .opblock-summary-control').click();

  await page.locator('#operations-jobs-createJob .opblock-summary-control').blur();
  await page.waitForLoadState('networkidle');
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'docs-page.png') });

  expect(elsewhere).toEqual([]);
  expect(errors).toEqual([]);
  // Everything came from the docs route: the page, its assets and the document.
  expect(requests.map((u) => new URL(u).pathname).sort()).toEqual(
    expect.arrayContaining(['/docs', '/docs/openapi.json', '/docs/reference.css', '/docs/reference.js', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css']),
  );
  expect(requests.every((u) => new URL(u).pathname.startsWith('/docs'))).toBe(true);
}, 120000);

test('no WCAG 2 A or AA violation that axe-core can find, with operations collapsed and opened', async () => {
  const axeBrowser = await launchChromium({ bypassCSP: true });
  try {
    const page = await axeBrowser.context.newPage();
    await page.goto(`${stack.url}/docs`, { waitUntil: 'load' });
    await page.locator('#operations-jobs-listJobChanges').waitFor({ state: 'visible', timeout: 30000 });
    await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
    const audit = () =>
      page.evaluate(async () => {
        const axe = (globalThis as any).axe;
        const result = await axe.run((globalThis as any).document, { runOnly: ['wcag2a', 'wcag2aa'] });
        return result.violations.map((v: any) => `${v.id}: ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
      });
    expect(await audit()).toEqual([]);
    await page.locator('#operations-jobs-listJobChanges .opblock-summary-control').click();
    await page.locator('#operations-jobs-listJobChanges .responses-table').waitFor({ state: 'visible' });
    await page.locator('#operations-jobs-createJob .opblock-summary-control').click();
    await page.locator('#operations-jobs-createJob .responses-table').waitFor({ state: 'visible' });
    expect(await audit()).toEqual([]);
  } finally {
    await axeBrowser.close();
  }
}, 120000);
