import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { startFakeGithub, type FakeGithub } from '../fakes/github/server.ts';
import { usd } from '../../hosts/console/src/format.ts';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';
import { startSmtpInbox, type SmtpInbox } from '../support/smtp-inbox.ts';
import { sshKeygen } from '../support/ssh-keys.ts';

/**
 * The console in Debian's Chromium against the real server on PostgreSQL with the sandbox (300 offers) and mail
 * through a real SMTP server: a person signs up, rents, watches, pays, hands out a token and stops everything.
 * Every page is checked by axe-core and photographed at desktop and phone width under test-artifacts/console.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const ARTIFACTS = join(ROOT, 'test-artifacts/console');
const CHROMIUM = '/usr/bin/chromium';
const PUBLIC = 'http://cp.test';
const PASSWORD = 'Correct-Horse-Battery-9';
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

let api: TestApi;
let inbox: SmtpInbox;
let github: FakeGithub;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const cspErrors: string[] = [];
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  // the build the server serves, as npm start makes it (about a second); it prints the first-load budget
  execFileSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '-c', 'hosts/console/vite.config.ts'], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } });
  mkdirSync(ARTIFACTS, { recursive: true });
  inbox = await startSmtpInbox();
  const clock = new ManualClock(new Date());
  github = await startFakeGithub({ clientId: 'Iv1.console0123456789', now: () => clock.now().getTime() });
  api = await startApi(
    {
      publicUrl: PUBLIC,
      providers: [{ name: 'sandbox', config: {} }],
      auth: { mail: { smtpUrl: inbox.url, from: 'gpu-control-plane <no-reply@cp.test>' }, github: { clientId: 'Iv1.console0123456789', githubUrl: github.githubUrl, apiUrl: github.apiUrl } },
    },
    { clock },
  );
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'Europe/Berlin', locale: 'en-GB' });
  // the server's public address (checkout pages, their return) is a name; the browser reaches this server for it
  await context.route(`${PUBLIC}/**`, (route) => route.fulfill({ status: 302, headers: { location: api.baseUrl + route.request().url().slice(PUBLIC.length) } }));
  await api.plane.services.market.refreshDue(); // as the server does when it starts
  page = await context.newPage();
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspErrors.push(message.text());
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await github?.close();
  await inbox?.close();
});

/** axe-core finds no serious or critical violation; the page at desktop and phone width, photographed. */
async function check(name: string, page = mainPage()): Promise<void> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(c: unknown): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document);
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  expect(violations, `axe on ${name}`).toEqual([]);
  await page.screenshot({ path: join(ARTIFACTS, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  try {
    // two frames: laid out and painted again at the new width
    await page.evaluate(() => {
      const frame = (globalThis as unknown as { requestAnimationFrame(f: () => void): void }).requestAnimationFrame;
      return new Promise<void>((done) => frame(() => frame(done)));
    });
    await page.screenshot({ path: join(ARTIFACTS, `${name}-phone.png`), fullPage: true });
    // usable at phone width: the page itself never scrolls sideways (wide tables scroll in their own box)
    expect(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth), `${name} at phone width`).toBeLessThanOrEqual(PHONE.width);
  } finally {
    await page.setViewportSize(DESKTOP);
  }
}

const mainPage = () => page;
const session = () => page.evaluate(() => sessionStorage.getItem('gcp.console.session'));
const email = `person.${Date.now().toString(36)}@example.com`;

describe('the console', () => {
  it('a visitor lands on the market summary, with the security headers', async () => {
    const response = await page.goto(`${api.baseUrl}/`);
    expect(page.url()).toBe(`${api.baseUrl}/console/`);
    const headers = response!.headers();
    const csp = headers['content-security-policy']!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toContain('unsafe-inline');
    expect(headers['referrer-policy']).toBe('no-referrer');
    await expect.poll(() => page.locator('.cards .card').count()).toBeGreaterThan(0);
    await expect(page.locator('main').textContent()).resolves.toMatch(/GPUs available on \d+ machines/);
    await check('market-signed-out');
  });

  it('signs up with the code mailed through SMTP, confirms and signs in', async () => {
    await page.getByRole('link', { name: 'create an account' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await check('sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/console/confirm');
    const mail = await inbox.next((m) => m.to.includes(email) && /confirmation/.test(m.subject), 15_000);
    const code = /\b(\d{6})\b/.exec(mail.text)![1]!;
    // a wrong code first: the API's detail shows where the person typed
    await page.getByLabel('Code').fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/code/i);
    await page.getByLabel('Code').fill(code);
    await check('confirm');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL('**/console/sign-in');
    await page.getByLabel('Password').fill(PASSWORD);
    await check('sign-in');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL('**/console/market');
    expect(await session()).toMatch(/^gcp_tok_/);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
  });

  it('the market page is interactive quickly and searches with the API filters, sortable', async () => {
    // time to interactive of the market, signed in: the mark is set once the search has answered and the table with
    // its handlers is rendered. Five loads, each in a fresh browser context (a first visit: nothing cached), the
    // session put in its tab's sessionStorage before the page runs; beside it, the baseline: the search request
    // alone, as the page made it
    const token = (await session())!;
    const times: number[] = [];
    const searches: number[] = [];
    for (let i = 0; i < 5; i++) {
      const fresh = await browser.newContext({ viewport: DESKTOP });
      await fresh.addInitScript((t) => sessionStorage.setItem('gcp.console.session', t), token);
      const cold = await fresh.newPage();
      await cold.goto(`${api.baseUrl}/console/market`);
      await cold.waitForFunction(() => performance.getEntriesByName('market-interactive').length > 0);
      const [tti, search] = await cold.evaluate(() => {
        const request = performance.getEntriesByType('resource').find((e) => e.name.includes('/v1/gpus')) as unknown as { startTime: number; responseEnd: number };
        return [performance.getEntriesByName('market-interactive')[0]!.startTime, request.responseEnd - request.startTime] as const;
      });
      times.push(tti);
      searches.push(search);
      await fresh.close();
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[2]!;
    console.log(
      `console: market page interactive after navigation, 5 first visits: median ${median(times).toFixed(0)} ms (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)}; goal < 1000), ` +
        `of which the GET /v1/gpus request median ${median(searches).toFixed(0)} ms (100 of the sandbox's 300 offers)`,
    );
    expect(median(times)).toBeLessThan(1_500); // the goal is 1 s; the margin is for a loaded shared machine
    await page.goto(`${api.baseUrl}/console/market`);
    const rows = page.locator('table.nodes tbody tr');
    await expect.poll(() => rows.count()).toBe(100);

    const gpuType = (await rows.first().locator('td').first().textContent())!.split(' ')[0]!;
    await page.getByLabel('GPU type').fill(gpuType);
    await page.getByLabel('Min CPUs').fill('2');
    await page.getByLabel('Docker in Docker').selectOption('true');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.url()).toContain(`gpu_type=${gpuType}`);
    await expect.poll(async () => (await page.getByRole('status').first().textContent()) ?? '').toMatch(/^\d+ matching nodes/);
    const types = await rows.locator('td:first-child').allTextContents();
    expect(types.length).toBeGreaterThan(0);
    for (const t of types) expect(t.startsWith(gpuType)).toBe(true);
    await expect(page.locator('.providers').textContent()).resolves.toContain('sandbox');
    // the Provider filter's hint names the providers the server enables (GET /v1/providers): here the sandbox alone
    await expect.poll(() => page.locator('.filters .hint', { hasText: /^provider: / }).textContent()).toBe('provider: one of sandbox');
    // the chosen GPU type's price history: the snapshot taken at start is its first hour
    await expect.poll(() => page.getByRole('heading', { name: `Price history: ${gpuType}` }).count()).toBe(1);
    await expect.poll(async () => (await page.locator('.history-summary').textContent()) ?? '').toMatch(/Lowest verified price per GPU hour over these \d+ points/);
    await expect.poll(() => page.locator('.price-history .uplot').count()).toBe(1);
    await page.getByRole('button', { name: 'Last 90 days by day' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Last 90 days by day' }).getAttribute('aria-pressed')).toBe('true');

    await page.getByRole('button', { name: /^Per hour/ }).click();
    await page.getByRole('button', { name: /^Per hour/ }).click();
    const prices = (await rows.locator('td:nth-child(5)').allTextContents()).map((p) => Number(p.replace(/[$,]/g, '').replace('.', '')));
    expect(prices).toEqual([...prices].sort((a, b) => b - a));
    expect(await page.locator('th[aria-sort="descending"]').textContent()).toContain('Per hour');
    // by keyboard: Tab reaches the column buttons, Enter sorts
    await page.getByRole('button', { name: /^VRAM GB/ }).focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    expect(await page.locator('th[aria-sort="ascending"]').textContent()).toContain('VRAM GB');
    await check('market');
  });

  it('adds funds by card through the checkout page and back', async () => {
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByLabel('Amount (USD)').fill('100.00');
    await page.getByRole('button', { name: 'Pay by card' }).click();
    await page.waitForURL(/\/v1\/payments\/manual\//);
    await page.getByRole('button', { name: /pay/i }).first().click();
    await page.waitForURL('**/console/billing');
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('$100.00 was added by card');
    await expect.poll(() => page.locator('.figures .card').first().textContent()).toContain('$100.00');
  });

  it('saves an SSH key, rents with the charge stated first, sees it running without reload, terminates it', async () => {
    await page.getByRole('link', { name: 'Keys, images & more' }).click();
    await page.getByLabel('Key name').fill('laptop');
    await page.getByLabel('Public key').fill(sshKeygen('ed25519').publicLine);
    await page.getByRole('button', { name: 'Save key' }).click();
    await expect.poll(() => page.locator('#ssh-keys table').textContent()).toContain('laptop');
    await page.getByLabel('Template name').fill('notebook');
    await page.getByLabel('Template SSH key').selectOption({ label: 'laptop' });
    await page.getByLabel('Environment').fill('MODE=train\nSEED=7');
    await page.getByLabel('Ports').fill('8888, 6006');
    await page.getByLabel('Ports').press('Enter');
    await expect.poll(() => page.locator('#templates table').textContent()).toContain('notebook');
    expect(await page.locator('#templates tr', { hasText: 'notebook' }).textContent()).toContain('8888, 6006MODE, SEED');
    await page.getByLabel('Template name').fill('bad ports');
    await page.getByLabel('Ports').fill('http');
    await page.getByRole('button', { name: 'Save template' }).click();
    await expect.poll(() => page.locator('#templates').getByRole('alert').textContent()).toBe('"http" is not a port number');
    // a volume is made at a provider that hosts them: the server's (GET /v1/providers) is the default and the hint
    await expect.poll(() => page.getByLabel('Volume provider').inputValue()).toBe('sandbox');
    expect(await page.locator('#volumes .hint', { hasText: 'with volumes here' }).textContent()).toBe('with volumes here: sandbox');
    await check('library');

    await page.getByRole('link', { name: 'Market' }).click();
    const first = page.locator('table.nodes tbody tr').first();
    await first.waitFor();
    const rate = (await first.locator('td:nth-child(5)').textContent())!;
    await first.getByRole('link', { name: /^Rent/ }).click();
    await page.waitForURL('**/console/rent/**');
    await expect(page.locator('#charge-now').textContent()).resolves.toContain(`Charged now: ${rate} for the first hour`);
    await page.getByLabel('Name').fill('trainer');
    await page.getByLabel('Termination hours').fill('3');
    // the saved key is chosen once the page has loaded the keys (later than the form under load)
    await expect.poll(() => page.getByLabel('SSH key').locator('option:checked').textContent()).toContain('laptop');
    await check('rent');
    await page.getByRole('button', { name: `Rent for ${rate} now` }).click();
    await page.waitForURL('**/console/instances**');
    const card = page.locator('li.instance', { hasText: 'trainer' });
    // the instances page loads after the navigation: on a loaded machine that takes more than the 1 s default
    await expect.poll(() => card.locator('.status').textContent(), { timeout: 15_000 }).toBe('provisioning');
    await check('instances-provisioning');

    api.clock.advance(21_000); // the sandbox's 20 s start, on the server's clock; the page polls by itself
    await expect.poll(() => card.locator('.status').textContent(), { timeout: 15_000 }).toBe('running');
    const ssh = await card.locator('.ssh code').textContent();
    expect(ssh).toMatch(/^ssh -p \d+ root@\S+$/);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: api.baseUrl });
    await card.getByRole('button', { name: /Copy the ssh command/ }).click();
    expect(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText())).toBe(ssh);
    await expect.poll(() => card.locator('.ssh .copied').textContent()).toBe('Copied');
    // the login user is the one the instance states (ssh_user): another provider's shows as the API says it
    const stated = (await api.call('GET', '/v1/instances', { token: (await session())! })).body as { name: string; ssh_user: string; ssh_host: string; ssh_port: number }[];
    const trainer = stated.find((i) => i.name === 'trainer')!;
    expect(ssh).toBe(`ssh -p ${trainer.ssh_port} ${trainer.ssh_user}@${trainer.ssh_host}`);
    await page.route('**/v1/instances', async (route) => {
      const response = await route.fetch();
      const listed = (await response.json()) as { ssh_user: string | null }[];
      await route.fulfill({ response, json: listed.map((i) => ({ ...i, ssh_user: 'ubuntu' })) });
    });
    await expect.poll(() => card.locator('.ssh code').textContent(), { timeout: 15_000 }).toBe(`ssh -p ${trainer.ssh_port} ubuntu@${trainer.ssh_host}`);
    await page.unroute('**/v1/instances');
    await expect.poll(() => card.locator('.ssh code').textContent(), { timeout: 15_000 }).toBe(ssh);
    await check('instances-running');

    await card.getByRole('button', { name: 'Reboot' }).click();
    await page.keyboard.press('Escape'); // the dialog closes and nothing happens
    expect(await card.getByRole('dialog').count()).toBe(0);
    expect(await card.locator('.status').textContent()).toBe('running');
    await card.getByRole('button', { name: 'Terminate' }).click();
    await check('instances-confirm');
    await card.getByRole('dialog').getByRole('button', { name: 'Terminate' }).click();
    await page.getByLabel(/Show terminated/).check();
    await expect.poll(() => card.locator('.status').textContent(), { timeout: 15_000 }).toMatch(/terminat/);
  });

  it('shows the rental in the ledger and the spend chart', async () => {
    const instances = (await api.call('GET', '/v1/instances', { token: (await session())! })).body as { id: string; name: string; charged_cents: number }[];
    const trainer = instances.find((i) => i.name === 'trainer')!;
    await page.getByRole('link', { name: 'Billing' }).click();
    const ledger = page.locator('table.ledger');
    await expect.poll(() => ledger.textContent()).toContain(trainer.id);
    const rows = await ledger.locator('tr', { hasText: trainer.id }).allTextContents();
    expect(rows.some((row) => /first hour/.test(row))).toBe(true);
    await expect.poll(() => page.locator('.chart canvas').count()).toBeGreaterThan(0);
    await check('billing');
  });

  it('creates a capped agent token with a burn ceiling and an idle timeout, shown once, listed with what remains of its cap, what it burns and its idle deadline', async () => {
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByLabel('Name', { exact: true }).fill('agent');
    await page.getByLabel('Spend cap (USD)').fill('5.00');
    await page.getByLabel('Max rental hours').fill('2');
    await page.getByLabel('Idle timeout (minutes)').fill('30');
    await page.getByLabel('Burn ceiling (USD an hour)').fill('3.00');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.locator('.shown-once code').textContent())!;
    expect(secret).toMatch(/^gcp_tok_/);
    const self = await api.call('GET', '/v1/tokens/self', { token: secret });
    expect(self.body).toMatchObject({ name: 'agent', spend_limit_cents: 500, max_rental_hours: 2, max_burn_cents_per_hour: 300, scopes: ['read', 'rent'], idle_timeout_minutes: 30 });
    await expect.poll(() => page.locator('tr', { hasText: 'agent' }).textContent()).toContain('$5.00');
    await expect.poll(() => page.locator('tr', { hasText: 'agent' }).textContent()).toContain('$0.00 of $3.00');
    expect(await page.locator('tr', { hasText: 'agent' }).textContent()).toContain('after 30 min idle');
    await check('tokens');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.locator('.shown-once').count()).toBe(0);
  });

  it("lists the tenant's people with their role and what linked them, removes one (their session ends), and refuses to remove the last owner", async () => {
    // someone linked in with this person's session, as a thief holding it would: they join with its role, owner
    const other = `other.${Date.now().toString(36)}@example.com`;
    await api.call('POST', '/v1/auth/sign-up', { body: { email: other, password: PASSWORD } });
    const mail = await inbox.next((m) => m.to.includes(other) && /confirmation/.test(m.subject), 15_000);
    await api.call('POST', '/v1/auth/confirm-email', { body: { email: other, code: /\b(\d{6})\b/.exec(mail.text)![1]! } });
    const linked = await api.call('POST', '/v1/auth/sign-in', { token: (await session())!, body: { email: other, password: PASSWORD } });
    expect(linked.body.linked).toBe(true);

    await page.getByRole('link', { name: 'People' }).click();
    const row = page.locator('table.people tbody tr', { hasText: other });
    await expect.poll(() => row.textContent()).toContain('a console session');
    expect(await row.locator('td.role').textContent()).toBe('owner');
    await expect(page.locator('table.people tbody tr', { hasText: email }).textContent()).resolves.toContain('their own sign-up');
    await check('people');

    await row.getByRole('button', { name: `Remove ${other}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove', exact: true }).click();
    await expect.poll(() => page.locator('table.people tbody tr').count()).toBe(1);
    expect((await api.call('GET', '/v1/tokens/self', { token: linked.body.token })).status).toBe(401);

    // the last owner of a tenant: the dialog says why not, in the API's words
    await page.getByRole('button', { name: `Remove ${email}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove', exact: true }).click();
    await expect.poll(() => page.getByRole('dialog').getByRole('alert').textContent()).toMatch(/last owner/);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect((await api.call('GET', '/v1/tokens/self', { token: (await session())! })).status).toBe(200);
  });

  it('invites a member with limits; the invitee accepts the mailed code in their own console and switches tenant; the owner changes their role at once; the budget is read-only to them', async () => {
    const boss = (await api.call('GET', '/v1/tokens/self', { token: (await session())! })).body;
    const invitee = `invitee.${Date.now().toString(36)}@example.com`;
    await api.call('POST', '/v1/auth/sign-up', { body: { email: invitee, password: PASSWORD } });
    const confirmation = await inbox.next((m) => m.to.includes(invitee) && /confirmation/.test(m.subject), 15_000);
    await api.call('POST', '/v1/auth/confirm-email', { body: { email: invitee, code: /\b(\d{6})\b/.exec(confirmation.text)![1]! } });

    // the owner invites from the People page; the code goes by mail only
    await page.getByRole('link', { name: 'People' }).click();
    const invite = page.getByRole('form', { name: 'Invite someone' });
    await invite.getByLabel('Email').fill(invitee);
    await invite.getByLabel('Role').selectOption('member');
    await invite.getByLabel('Spend limit (USD)').fill('5');
    await invite.getByLabel('Max rental hours').fill('2');
    await invite.getByRole('button', { name: 'Invite' }).click();
    await expect.poll(() => invite.getByRole('status').textContent()).toContain(`Invited ${invitee} as member`);
    const invitationRow = page.locator('table.invitations tbody tr', { hasText: invitee });
    await expect.poll(() => invitationRow.textContent()).toContain('pending');
    expect(await invitationRow.textContent()).toContain('$5.00 spend limit, rentals up to 2 h');
    await check('people-invite');
    const code = /Invitation code: (\S+)/.exec((await inbox.next((m) => m.to.includes(invitee) && /invited/.test(m.subject), 15_000)).text)![1]!;
    expect(await page.locator('main').textContent()).not.toContain(code);

    // the invitee, in a console of their own: signed in to their own tenant, one tenant, no switch
    const theirs = await browser.newPage({ viewport: DESKTOP });
    const theirSession = () => theirs.evaluate(() => sessionStorage.getItem('gcp.console.session'));
    try {
      await theirs.goto(`${api.baseUrl}/console/sign-in`);
      await theirs.getByLabel('Email').fill(invitee);
      await theirs.getByLabel('Password').fill(PASSWORD);
      await theirs.getByRole('button', { name: 'Sign in', exact: true }).click();
      await theirs.waitForURL('**/console/market');
      const own = (await theirSession())!;
      const ownTenant = (await api.call('GET', '/v1/tokens/self', { token: own })).body.tenant_id as string;
      await theirs.getByRole('link', { name: 'People' }).click();
      const accept = theirs.getByRole('form', { name: 'Accept an invitation' });
      await accept.waitFor();
      expect(await theirs.getByLabel('Tenant').count()).toBe(0);
      // a made-up code: the API's 404 detail, where they typed
      await accept.getByLabel('Invitation code').fill('gcpinv_madeup0000000000000000');
      await accept.getByRole('button', { name: 'Accept invitation' }).click();
      await expect.poll(() => accept.getByRole('alert').textContent()).toMatch(/invitation/i);
      await accept.getByLabel('Invitation code').fill(code);
      await accept.getByRole('button', { name: 'Accept invitation' }).click();
      await expect.poll(() => accept.getByRole('status').textContent()).toContain(`You joined tenant ${boss.tenant_id} as member`);
      // two tenants now: the header offers the switch
      await theirs.getByLabel('Tenant').waitFor();
      await check('people-accepted', theirs);
      await accept.getByRole('button', { name: 'Switch to it' }).click();
      await expect.poll(async () => (await api.call('GET', '/v1/tokens/self', { token: (await theirSession())! })).body.tenant_id).toBe(boss.tenant_id);
      const memberSession = (await theirSession())!;
      expect((await api.call('GET', '/v1/tokens/self', { token: memberSession })).body).toMatchObject({ role: 'member', root: false, remaining_cents: 500, effective_max_rental_hours: 2 });
      // the page drawn again for the new session: a member does not see the people (their addresses are the tenant's)
      await expect.poll(() => theirs.locator('main').textContent()).toContain("As a member here you do not see the tenant's people; an owner or admin does.");
      expect(await theirs.locator('table.people').count()).toBe(0);
      expect(await theirs.getByRole('button', { name: /^(Change|Remove) / }).count()).toBe(0);
      expect(await theirs.getByRole('form', { name: 'Invite someone' }).count()).toBe(0);
      await check('people-member', theirs);

      // the owner sees them with their limits and makes them billing: at once for their session
      await page.reload();
      const personRow = page.locator('table.people tbody tr', { hasText: invitee });
      await expect.poll(() => personRow.textContent()).toContain('$5.00 spend limit, rentals up to 2 h');
      await expect.poll(() => invitationRow.textContent()).toContain('accepted');
      await personRow.getByRole('button', { name: `Change ${invitee}` }).click();
      const change = personRow.getByRole('dialog');
      expect(await change.getByLabel('Spend limit (USD)').inputValue()).toBe('5.00');
      await change.getByLabel('Role').selectOption('billing');
      expect(await change.getByLabel('Spend limit (USD)').count()).toBe(0);
      await check('people-change');
      await change.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => personRow.locator('td.role').textContent()).toBe('billing');
      expect((await api.call('GET', '/v1/tokens/self', { token: memberSession })).body).toMatchObject({ role: 'billing', scopes: ['read', 'billing'] });

      // a refusal shows the API's detail: the last owner cannot step down
      const ownerRow = page.locator('table.people tbody tr', { hasText: email });
      await ownerRow.getByRole('button', { name: `Change ${email}` }).click();
      await ownerRow.getByRole('dialog').getByLabel('Role').selectOption('admin');
      await ownerRow.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => ownerRow.getByRole('dialog').getByRole('alert').textContent()).toMatch(/last owner/);
      await ownerRow.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      expect(await ownerRow.locator('td.role').textContent()).toBe('owner');

      // billing now, not root: the budget is shown without its form
      await theirs.getByRole('link', { name: 'Billing' }).click();
      await expect.poll(() => theirs.locator('main').textContent()).toContain('Only an owner or admin sets or changes the budget.');
      expect(await theirs.getByRole('button', { name: 'Save budget' }).count()).toBe(0);
      expect(await theirs.getByLabel('Budget per calendar month (USD)').count()).toBe(0);
      await check('billing-read-only', theirs);

      // back to their own tenant with the header's switch: the session they had there, where they are root
      await theirs.getByLabel('Tenant').selectOption(ownTenant);
      await expect.poll(() => theirSession()).toBe(own);
      await expect.poll(() => theirs.getByRole('button', { name: 'Save budget' }).count()).toBe(1);
      // signing out ends the tab's sessions in both tenants
      await theirs.getByRole('button', { name: 'Sign out' }).click();
      await theirs.waitForURL('**/console/sign-in');
      expect((await api.call('GET', '/v1/tokens/self', { token: own })).status).toBe(401);
      expect((await api.call('GET', '/v1/tokens/self', { token: memberSession })).status).toBe(401);
    } finally {
      await theirs.close();
    }

    // a pending invitation revoked from the list: its code stops working
    const late = `late.${Date.now().toString(36)}@example.com`;
    await invite.getByLabel('Email').fill(late);
    await invite.getByLabel('Role').selectOption('viewer');
    expect(await invite.getByLabel('Spend limit (USD)').count()).toBe(0);
    await invite.getByRole('button', { name: 'Invite' }).click();
    const lateRow = page.locator('table.invitations tbody tr', { hasText: late });
    await expect.poll(() => lateRow.textContent()).toContain('pending');
    await lateRow.getByRole('button', { name: `Revoke the invitation of ${late}` }).click();
    await lateRow.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => lateRow.locator('.status').textContent()).toBe('revoked');
    expect(await lateRow.getByRole('button', { name: /^Revoke/ }).count()).toBe(0);
  });

  it('reserves a node for tomorrow from its rent page: nothing charged now, listed as scheduled', async () => {
    const balance = (await api.call('GET', '/v1/billing/account', { token: (await session())! })).body.balance_cents;
    await page.getByRole('link', { name: 'Market' }).click();
    const row = page.locator('table.nodes tbody tr').nth(3);
    await row.waitFor();
    await row.getByRole('link', { name: /^Rent/ }).click();
    await page.getByText('Reserve it for later instead').click();
    const tomorrow = new Date(Date.now() + 86_400_000);
    const local = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, '0')}-${String(tomorrow.getDate()).padStart(2, '0')}T09:00`;
    await page.getByLabel('Starts at').fill(local);
    await page.getByLabel('Hours', { exact: true }).fill('2');
    await expect(page.locator('details .charge').textContent()).resolves.toMatch(/Charged now: nothing/);
    await check('rent-reserve');
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.waitForURL('**/console/library**');
    await expect.poll(() => page.locator('#reservations table').textContent()).toContain('scheduled');
    expect((await api.call('GET', '/v1/billing/account', { token: (await session())! })).body.balance_cents).toBe(balance);
  });

  it('claims spot capacity from the market: what the cap commits said first, listed, rented by the sweep, released with confirmation', async () => {
    const token = (await session())!;
    await page.getByRole('link', { name: 'Market' }).click();
    const rows = page.locator('table.nodes tbody tr');
    await expect.poll(() => rows.count()).toBe(100);
    // a spot node nobody else here rents (the first was rented, the fourth reserved, the emergency stop rents the 50th)
    let spotRow: ReturnType<typeof rows.nth> | null = null;
    for (let i = 5; i < 40 && !spotRow; i++) if ((await rows.nth(i).getByRole('link', { name: /^Claim spot/ }).count()) === 1) spotRow = rows.nth(i);
    expect(spotRow, 'a spot node on the market').not.toBeNull();
    await spotRow!.getByRole('link', { name: /^Claim spot/ }).click();
    await page.waitForURL('**/console/spot-claims?node=**');
    const bid = page.getByLabel('Bid per GPU-hour (USD)');
    await expect.poll(() => bid.inputValue()).toMatch(/^\d+\.\d{2}$/); // prefilled with its spot price now
    const bidCents = Number((await bid.inputValue()).replace('.', ''));
    const gpus = Number(await page.getByLabel('GPU count').inputValue());
    await page.getByLabel('Claim name').fill('cheap-spot');
    await page.getByLabel('Hours', { exact: true }).fill('3');
    const commitment = (await page.locator('#spot-commitment').textContent())!;
    expect(commitment).toContain('Charged now: nothing');
    expect(commitment).toContain(`At most ${usd(bidCents * gpus)} per hour`);
    expect(commitment).toContain(`Held on your token's spend cap now: ${usd(bidCents * gpus * 3)} (${usd(bidCents)} × ${gpus} GPU${gpus === 1 ? '' : 's'} × 3 hours)`);
    await check('spot-claim-form');
    await page.getByRole('button', { name: 'Claim', exact: true }).click();
    const claimRow = page.locator('table.spot-claims tbody tr', { hasText: 'cheap-spot' });
    await expect.poll(() => claimRow.locator('.status').textContent()).toBe('pending');
    expect(await claimRow.locator('td').nth(2).textContent()).toBe(usd(bidCents));
    const [claim] = (await api.call('GET', '/v1/spot-claims', { token })).body;
    expect(claim).toMatchObject({ name: 'cheap-spot', status: 'pending', bid_cents_per_gpu_hour: bidCents, gpu_count: gpus, hours: 3, preemptions: 0 });

    // the sweep rents its machine (on a server, its pass within a minute); the page reads the claim again by itself
    const swept = await api.call('POST', '/v1/operator/sweep', { headers: { 'x-service-operator-key': OPERATOR_KEY } });
    expect(swept.body.spot_claims_rented, JSON.stringify(swept.body)).toBe(1);
    await expect.poll(() => claimRow.locator('.status').textContent(), { timeout: 15_000 }).toBe('active');
    await check('spot-claims');
    const instanceLink = claimRow.getByRole('link');
    const instanceId = (await instanceLink.textContent())!;
    await instanceLink.click();
    await page.waitForURL(`**/console/instances?instance=${instanceId}`);
    await expect.poll(() => page.locator('li.instance.highlight').count()).toBe(1);

    await page.getByRole('link', { name: 'Spot claims' }).click();
    await claimRow.getByRole('button', { name: 'Release' }).click();
    await expect(claimRow.getByRole('dialog').textContent()).resolves.toContain('Its machine is terminated');
    await claimRow.getByRole('dialog').getByRole('button', { name: 'Release' }).click();
    await expect.poll(() => claimRow.locator('.status').textContent()).toBe('released');
    expect(await claimRow.getByRole('button', { name: 'Release' }).count()).toBe(0);
    expect((await api.call('GET', `/v1/spot-claims/${claim.id}`, { token })).body.status).toBe('released');
    await expect.poll(async () => (await api.call('GET', `/v1/instances/${instanceId}`, { token })).body.status).toBe('terminated');
  });

  it('sets a monthly budget on the billing page and shows the spend of the month against it', async () => {
    const token = (await session())!;
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByLabel('Budget per calendar month (USD)').fill('500');
    await page.getByLabel('Alert at (percent)').fill('80, 50');
    await page.getByLabel(/Stop at 100 %/).check();
    await page.getByRole('button', { name: 'Save budget' }).click();
    await expect.poll(() => page.locator('.budget-spend').textContent()).toMatch(/of \$500\.00 spent this month/);
    const budget = (await api.call('GET', '/v1/billing/budget', { token })).body;
    expect(budget).toMatchObject({ monthly_cents: 50_000, alert_percents: [50, 80], stop_at_limit: true });
    expect(await page.locator('.budget-spend').textContent()).toBe(`${usd(budget.spent_cents)} of ${usd(50_000)} spent this month (${budget.percent} %)`);
    await check('billing-budget');
    await page.getByRole('button', { name: 'Remove budget' }).click();
    await expect.poll(() => page.locator('.budget-spend').count()).toBe(0);
    expect((await api.call('GET', '/v1/billing/budget', { token })).status).toBe(404);
  });

  it('an emergency stop, confirmed by typing STOP, terminates what runs and pauses renting', async () => {
    const token = (await session())!;
    // a node nobody rented in this test (an offer taken and given back may take a while to be listed free again)
    const node = (await api.call('GET', '/v1/gpus?limit=50', { token })).body.nodes.at(-1);
    const rented = await api.call('POST', '/v1/instances', { token, body: { node_id: node.id, name: 'left-running' } });
    expect(rented.status, JSON.stringify(rented.body)).toBe(201);
    await page.getByRole('link', { name: 'Billing' }).click();
    const stop = page.getByRole('button', { name: 'Stop everything' });
    await stop.waitFor();
    expect(await stop.isDisabled()).toBe(true);
    await page.getByLabel('Type STOP to confirm').fill('stop');
    expect(await stop.isDisabled()).toBe(true);
    await page.getByLabel('Type STOP to confirm').fill('STOP');
    await stop.click();
    await expect.poll(() => page.locator('.danger-zone').textContent()).toContain('1 machine terminated');
    expect((await api.call('GET', `/v1/instances/${rented.body.id}`, { token })).body.status).toMatch(/terminat/);
    expect((await api.call('GET', '/v1/billing/account', { token })).body.rentals).toBe('paused');
    await expect.poll(() => page.getByRole('button', { name: 'Resume renting' }).isVisible()).toBe(true);
    await check('billing-stopped');
  });

  it("signs in with GitHub's device flow: the code shown, the page signs in once GitHub approves it", async () => {
    const other = await browser.newPage({ viewport: DESKTOP });
    try {
      await other.goto(`${api.baseUrl}/console/sign-in`);
      await other.getByRole('link', { name: 'Sign in with GitHub' }).click();
      await other.getByRole('button', { name: 'Get a code' }).click();
      const userCode = (await other.locator('.code code').textContent())!;
      expect(userCode).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
      expect(await other.getByRole('link', { name: /login\/device/ }).getAttribute('href')).toContain('/login/device');
      await check('github', other);
      github.state.approve(userCode, { id: 4242, login: 'octo', email: 'octo@example.com', emailVerified: true });
      api.clock.advance(6_000); // GitHub's interval on the server's clock; the page polls every interval by itself
      await other.waitForURL('**/console/market', { timeout: 20_000 });
      expect(await other.evaluate(() => sessionStorage.getItem('gcp.console.session'))).toMatch(/^gcp_tok_/);
    } finally {
      await other.close();
    }
  });

  it('links GitHub sign-in only where the server has GitHub configured', async () => {
    const linked = async (baseUrl: string): Promise<number> => {
      const other = await browser.newPage({ viewport: DESKTOP });
      try {
        const config = other.waitForResponse((r) => r.url().endsWith('/v1/auth/config'));
        await other.goto(`${baseUrl}/console/sign-in`);
        await config;
        await other.getByRole('link', { name: 'Forgot the password?' }).waitFor();
        await other.evaluate(() => new Promise<void>((done) => (globalThis as unknown as { requestAnimationFrame(f: () => void): void }).requestAnimationFrame(done))); // rendered after it
        return await other.getByRole('link', { name: 'Sign in with GitHub' }).count();
      } finally {
        await other.close();
      }
    };
    expect(await linked(api.baseUrl)).toBe(1);
    const bare = await startApi({ publicUrl: PUBLIC, auth: { mail: { smtpUrl: inbox.url, from: 'gpu-control-plane <no-reply@cp.test>' } } });
    try {
      expect(await linked(bare.baseUrl)).toBe(0);
    } finally {
      await bare.close();
    }
  });

  it('forgot password: a code mailed, a new password set, signed in with it', async () => {
    const other = await browser.newPage({ viewport: DESKTOP });
    try {
      await other.goto(`${api.baseUrl}/console/sign-in`);
      await other.getByRole('link', { name: 'Forgot the password?' }).click();
      await other.getByLabel('Email').fill(email);
      await check('forgot', other);
      await other.getByRole('button', { name: 'Email me a code' }).click();
      await other.waitForURL('**/console/reset');
      const mail = await inbox.next((m) => m.to.includes(email) && /reset/.test(m.subject), 15_000);
      await other.getByLabel('Code').fill(/\b(\d{6})\b/.exec(mail.text)![1]!);
      await other.getByLabel('New password').fill(`${PASSWORD}-new`);
      await check('reset', other);
      await other.getByRole('button', { name: 'Set password' }).click();
      await other.waitForURL('**/console/sign-in');
      await other.getByLabel('Password').fill(`${PASSWORD}-new`);
      await other.getByRole('button', { name: 'Sign in', exact: true }).click();
      await other.waitForURL('**/console/market');
    } finally {
      await other.close();
    }
  });

  it('back from a hosted sign-in page with a code: the console swaps it, with its PKCE verifier, for a session', async () => {
    // the built-in provider's page stands in for Cognito's hosted UI (the console links that one when configured)
    const other = await browser.newPage({ viewport: DESKTOP });
    try {
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      await other.goto(`${api.baseUrl}/console/sign-in`);
      await other.evaluate((saved) => sessionStorage.setItem('gcp.console.pkce', saved), JSON.stringify({ verifier, state: 'st-1' }));
      const query = new URLSearchParams({ response_type: 'code', client_id: 'gpu-control-plane', redirect_uri: `${api.baseUrl}/console/callback`, state: 'st-1', code_challenge: challenge, code_challenge_method: 'S256' });
      await other.goto(`${api.baseUrl}/auth/authorize?${query}`);
      await other.getByLabel('Email').fill(email);
      await other.getByLabel('Password').fill(`${PASSWORD}-new`);
      await other.getByRole('button', { name: 'Sign in' }).click();
      await other.waitForURL('**/console/market', { timeout: 15_000 });
      const token = await other.evaluate(() => sessionStorage.getItem('gcp.console.session'));
      expect((await api.call('GET', '/v1/tokens/self', { token: token! })).body.kind).toBe('session');
      expect(await other.evaluate(() => sessionStorage.getItem('gcp.console.pkce'))).toBeNull();
    } finally {
      await other.close();
    }
  });

  it('/docs renders the API reference from the package, with the security headers', async () => {
    const response = await page.goto(`${api.baseUrl}/docs`);
    expect(response!.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response!.headers()['content-security-policy']).toMatch(/script-src 'self'(;|$)/);
    await expect.poll(() => page.locator('body').textContent(), { timeout: 20_000 }).toContain('Liveness');
    await check('docs');
  });

  it('serves the built files compressed, unknown ones as 404 {detail}, and leaves the API untouched', async () => {
    const html = await (await fetch(`${api.baseUrl}/console/instances`)).text();
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const gz = await fetch(api.baseUrl + script, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(gz.headers.get('cache-control')).toContain('immutable');
    const budget = JSON.parse(readFileSync(join(ROOT, 'dist/console/budget.json'), 'utf8')) as { first_load_gzip_bytes: number };
    expect(budget.first_load_gzip_bytes).toBeLessThan(150 * 1024);
    const missing = await fetch(`${api.baseUrl}/console/assets/gone-0000.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { detail: string }).detail).toMatch(/no console file/);
    const redirect = await fetch(`${api.baseUrl}/?checkout=success&session_id=cs_1`, { redirect: 'manual' });
    expect(redirect.headers.get('location')).toBe('/console/?checkout=success&session_id=cs_1');
    const health = await fetch(`${api.baseUrl}/healthz`);
    expect(health.headers.get('content-security-policy')).toBeNull();
    expect((await fetch(`${api.baseUrl}/v1/nothing-here`)).status).toBe(404);
    expect((await fetch(`${api.baseUrl}/console`, { method: 'POST' })).status).toBe(404);
  });

  it('no page broke the Content Security Policy', () => {
    expect(cspErrors).toEqual([]);
  });
});
