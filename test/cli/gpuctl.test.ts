import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { buildProgram } from '../../hosts/cli/program.ts';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';
import { sandboxOf } from '../support/rentals.ts';
import { sshKeygen } from '../support/ssh-keys.ts';
import { gpuctl, until, type Gpuctl } from './run-gpuctl.ts';

/**
 * The real gpuctl process (bin/gpuctl.js, as `npx gpuctl` runs it) against the real server on PostgreSQL,
 * signed in by GPUCTL_URL and GPUCTL_TOKEN: each command's output and exit code, `--json` equal to the API's
 * own answer, and the exit code of each class of error.
 */
// each test runs gpuctl several times as a process of its own: seconds each on a loaded machine
vi.setConfig({ testTimeout: 120_000 });

let world: { api: TestApi; clock: ManualClock; nodes: string[] };
let cli: Gpuctl;
let tenant: { tenantId: string; token: string; tokenId: string };
let nextNode = 0;

beforeAll(async () => {
  // the server's clock starts at the real time: gpuctl shows times relative to its own clock
  const clock = new ManualClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  const api = await startApi({ providers: [{ name: 'sandbox', config: {} }], secretsKey: randomBytes(32) }, { clock });
  const offers = await sandboxOf(api).listOffers();
  const nodes = offers.filter((o) => o.available > 0 && o.gpuCount === 1).map((o) => o.id);
  world = { api, clock, nodes };
  tenant = await api.newTenant();
  const credit = await api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/credit`, { headers: { 'x-service-operator-key': OPERATOR_KEY }, body: { amount_usd: '50.00', reason: 'test funds' } });
  expect(credit.status).toBe(201);
  cli = gpuctl({ GPUCTL_URL: api.baseUrl, GPUCTL_TOKEN: tenant.token });
});
afterAll(async () => world?.api.close());

/** A node no earlier test rented (a rented sandbox node is no longer available). */
const freshNode = () => world.nodes[nextNode++]!;

const api = <T = any>(method: string, path: string, options: { token?: string; body?: unknown } = {}) =>
  world.api.call<T>(method, path, { token: tenant.token, ...options }).then((r) => r.body);
const json = (stdout: string) => JSON.parse(stdout) as unknown;

/** Every command path of the program: ['gpus'], ['tokens', 'ls'], ... */
function commandPaths(): string[][] {
  const paths: string[][] = [];
  const walk = (command: ReturnType<typeof buildProgram>, prefix: string[]) => {
    for (const sub of command.commands) {
      if (sub.name() === 'help') continue;
      paths.push([...prefix, sub.name()]);
      walk(sub, [...prefix, sub.name()]);
    }
  };
  walk(buildProgram(), []);
  return paths;
}

describe('usage', () => {
  it('`npx gpuctl` in the checkout runs the package bin on Node 24', async () => {
    const root = join(import.meta.dirname, '../..');
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'gpuctl', '--version'], { cwd: root, env: { ...process.env, npm_config_update_notifier: 'false' } });
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
    expect(manifest.bin).toEqual({ gpuctl: 'bin/gpuctl.js' });
    expect(stdout).toBe(`${manifest.version}\n`);
  });

  it('every command has --help with an Example: line, exit 0', async () => {
    const paths = commandPaths();
    expect(paths.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining(['login', 'logout', 'whoami', 'gpus', 'market', 'rent', 'ls', 'show', 'terminate', 'reboot', 'schedule-removal', 'balance', 'ledger', 'deposit', 'checkout', 'stop', 'tokens ls', 'tokens create', 'tokens revoke', 'budget show', 'budget set', 'budget clear', 'people ls', 'people invite', 'people invitations', 'people revoke-invitation', 'people set-role', 'people rm', 'people accept', 'tenants ls', 'tenants switch', 'ssh-keys ls', 'images ls', 'templates ls', 'volumes ls']),
    );
    for (let i = 0; i < paths.length; i += 6) {
      const runs = await Promise.all(paths.slice(i, i + 6).map((path) => cli.run([...path, '--help']).then((run) => ({ path, run }))));
      for (const { path, run } of runs) {
        expect(run.code, path.join(' ')).toBe(0);
        expect(run.stdout, path.join(' ')).toMatch(/\nExample:\n {2}\$ .*gpuctl /);
      }
    }
  });

  it('an unknown command, a missing argument, an unknown flag or a bad value exit 2 before any request', async () => {
    for (const args of [['rnet'], ['show'], ['ls', '--colour'], ['rent', 'sandbox:1', '--hours', 'two'], ['deposit', 'ten'], ['schedule-removal', 'ins_abc', 'soonish'], ['tokens', 'frobnicate'], []]) {
      const run = await cli.run(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toMatch(/error|Usage/);
      expect(run.stdout).toBe('');
    }
  });

  it('without a token: exit 3 saying how to sign in; a wrong token: exit 3 with the API detail', async () => {
    const none = await cli.run(['ls'], { env: { GPUCTL_TOKEN: undefined } });
    expect(none.code, none.stderr).toBe(3);
    expect(none.stderr).toContain('gpuctl login');
    const wrong = await cli.run(['ls'], { env: { GPUCTL_TOKEN: 'gcp_tok_nope' } });
    expect(wrong.code, wrong.stderr).toBe(3);
    expect(wrong.stderr).toMatch(/^error: .*token/im);
  });

  it('rate limited (429): exit 7 saying when to retry', async () => {
    const limited = await startApi({ rateLimits: { publicPerMinute: 100, perTokenPerMinute: 2 } });
    try {
      const { token } = await limited.newTenant('limited');
      const runs = [];
      for (let i = 0; i < 3; i++) runs.push(await cli.run(['ls'], { env: { GPUCTL_URL: limited.baseUrl, GPUCTL_TOKEN: token } }));
      expect(runs.map((r) => r.code)).toEqual([0, 0, 7]);
      expect(runs[2]!.stderr).toMatch(/^error: .*\(retry in \d+ s\)\n$/);
    } finally {
      await limited.close();
    }
  });

  it('a server that does not answer: exit 7', async () => {
    const run = await cli.run(['ls'], { env: { GPUCTL_URL: 'http://127.0.0.1:9' } });
    expect(run.code, run.stderr).toBe(7);
    expect(run.stderr).toContain('cannot reach http://127.0.0.1:9');
  });
});

describe('market', () => {
  it('gpus: a table cheapest first with money from cents; --json is the API answer for the same filters', async () => {
    const run = await cli.run(['gpus', '--limit', '5']);
    expect(run.code, run.stderr).toBe(0);
    const answer = await api('GET', '/v1/gpus?limit=5');
    const first = answer.nodes[0];
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^NODE\s+GPUS\s+VRAM\s+PER GPU\s+MACHINE/);
    const cents = first.price_per_hour_cents as number;
    expect(lines[1]).toContain(first.id);
    expect(lines[1]).toContain(`$${Math.trunc(cents / 100).toLocaleString('en-US')}.${String(cents % 100).padStart(2, '0')}/h`);
    expect(run.stdout).toContain(`5 of ${answer.total} matches; sandbox ok`);

    const filters = ['--gpu-type', first.gpu_type, '--gpu-count', String(first.gpu_count), '--max-price', '1000', '--min-vram-gb', '1', '--no-mig', '--limit', '3'];
    const filtered = await cli.run(['gpus', ...filters, '--json']);
    expect(filtered.code, filtered.stderr).toBe(0);
    const query = `gpu_type=${encodeURIComponent(first.gpu_type)}&gpu_count=${first.gpu_count}&max_price_per_gpu_hour=1000&min_vram_gb=1&mig=false&limit=3`;
    expect(json(filtered.stdout)).toEqual(await api('GET', `/v1/gpus?${query}`));
    expect((json(filtered.stdout) as { nodes: { gpu_type: string }[] }).nodes.every((n) => n.gpu_type === first.gpu_type)).toBe(true);
  });

  it('--max-price is the per-GPU ceiling max_price_per_gpu_hour; a value the API refuses exits 8 with its detail', async () => {
    const cheap = await cli.run(['gpus', '--max-price', '0.01', '--json']);
    expect(json(cheap.stdout)).toEqual(await api('GET', '/v1/gpus?max_price_per_gpu_hour=0.01'));
    const tooHigh = await cli.run(['gpus', '--max-price', '100001']);
    expect(tooHigh.code, tooHigh.stderr).toBe(8);
    expect(tooHigh.stderr).toContain('max_price_per_gpu_hour');
  });

  it('market: groups as a table; --json is the API answer', async () => {
    const run = await cli.run(['market']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^GPU\s+PROVIDER\s+REGION\s+OFFERS/);
    const asJson = await cli.run(['market', '--json']);
    expect(json(asJson.stdout)).toEqual(await api('GET', '/v1/marketplace'));
  });

  it('market history: a GPU family\'s prices by hour or day as a table; --json is the API answer; a bad range exits 8', async () => {
    const gpuType = (await api('GET', '/v1/gpus?limit=1')).nodes[0].gpu_type;
    const run = await cli.run(['market', 'history', gpuType]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^AT\s+PROVIDER\s+LOWEST\s+MEDIAN\s+GPUS\n.*sandbox\s+\$\d+\.\d\d\/h/);
    const asJson = await cli.run(['market', 'history', gpuType, '--by', 'day', '--json']);
    expect(json(asJson.stdout)).toEqual(await api('GET', `/v1/market/history?gpu_type=${gpuType}&granularity=day`));
    expect((json(asJson.stdout) as { points: unknown[] }).points.length).toBeGreaterThan(0);
    const wide = await cli.run(['market', 'history', gpuType, '--since', '2020-01-01T00:00:00Z']);
    expect(wide.code).toBe(8);
    expect(wide.stderr).toMatch(/narrow it/);
  });
});

describe('instances', () => {
  let instanceId: string;

  it('rent sends an idempotency key and prints the instance; ls and show as tables; --json the API answers', async () => {
    const key = sshKeygen('ed25519');
    const keyFile = join(cli.configHome, 'id_ed25519.pub');
    writeFileSync(keyFile, `${key.publicLine}\n`);
    const nodeId = freshNode();
    const run = await cli.run(['rent', nodeId, '--hours', '2', '--name', 'trainer', '--ssh-key', keyFile]);
    expect(run.code, run.stderr).toBe(0);
    instanceId = /Rented (ins_[a-z0-9]+)/.exec(run.stdout)![1]!;
    const instance = await api('GET', `/v1/instances/${instanceId}`);
    expect(instance).toMatchObject({ node_id: nodeId, name: 'trainer', idempotency_key: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(instance.window_ends_at).not.toBeNull();

    const ls = await cli.run(['ls']);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).toMatch(/^ID\s+NAME\s+STATUS/);
    expect(ls.stdout).toContain(instanceId);
    expect(ls.stdout).toMatch(/trainer\s+provisioning/);
    const lsJson = await cli.run(['ls', '--json']);
    expect(json(lsJson.stdout)).toEqual(await api('GET', '/v1/instances'));

    const show = await cli.run(['show', instanceId]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^id:\\s+${instanceId}$`, 'm'));
    // the server clock stands at the time the file started; the CLI counts from the real time
    expect(show.stdout).toMatch(/^window ends:\s+in 1h 5\dm$/m);
    const showJson = await cli.run(['show', instanceId, '--json']);
    expect(json(showJson.stdout)).toEqual(await api('GET', `/v1/instances/${instanceId}`));
  });

  it('rent --recover asks for managed recovery; show tells the replacements left', async () => {
    const run = await cli.run(['rent', freshNode(), '--hours', '2', '--recover', '3', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const rented = json(run.stdout) as { id: string };
    expect(rented).toMatchObject({ recovery: { max_attempts: 3, attempts_left: 3, failure: null }, replaces: null, replaced_by: null });
    const show = await cli.run(['show', rented.id]);
    expect(show.stdout).toMatch(/^recovery:\s+3 of 3 replacements left$/m);
    expect((await cli.run(['rent', freshNode(), '--recover', '11'])).code).not.toBe(0);
  });

  it('the same --idempotency-key twice rents one machine', async () => {
    const nodeId = freshNode();
    const first = await cli.run(['rent', nodeId, '--hours', '1', '--idempotency-key', 'cli-retry-1', '--json']);
    const again = await cli.run(['rent', nodeId, '--hours', '1', '--idempotency-key', 'cli-retry-1', '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(again.code, again.stderr).toBe(0);
    expect((json(again.stdout) as { id: string }).id).toBe((json(first.stdout) as { id: string }).id);
    await api('POST', `/v1/instances/${(json(first.stdout) as { id: string }).id}/terminate`);
  });

  it('rent by search flags, quote then rent --quote, and --dry-run that rents nothing', async () => {
    const gpus = await api('GET', '/v1/gpus?gpu_count=1&limit=200');
    const node = gpus.nodes.find((n: any) => n.price_verified && n.price_per_hour_cents <= 300);
    const flags = ['--gpu-type', node.gpu_type, '--gpu-count', '1', '--max-price', (node.price_per_gpu_hour_cents / 100).toFixed(2), '--hours', '1'];
    const before = (await api('GET', '/v1/instances')).length;
    const dry = await cli.run(['rent', ...flags, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^Dry run, nothing rented: \S+ at \$\d+\.\d\d\/h: \$\d+\.\d\d charged now, \$\d+\.\d\d committed/);
    expect((await api('GET', '/v1/instances')).length).toBe(before);

    const rented = await cli.run(['rent', ...flags, '--json']);
    expect(rented.code, rented.stderr).toBe(0);
    const instance = json(rented.stdout) as { id: string; gpu_type: string; rate_cents_per_hour: number };
    expect(instance.gpu_type).toBe(node.gpu_type);
    expect(instance.rate_cents_per_hour).toBeLessThanOrEqual(node.price_per_gpu_hour_cents);

    const quoted = await cli.run(['quote', ...flags]);
    expect(quoted.code, quoted.stderr).toBe(0);
    const quoteId = /^(quo_[a-z0-9]+): /.exec(quoted.stdout)![1]!;
    expect(quoted.stdout).toContain(`gpuctl rent --quote ${quoteId}`);
    const byQuote = await cli.run(['rent', '--quote', quoteId, '--json']);
    expect(byQuote.code, byQuote.stderr).toBe(0);
    const again = await cli.run(['rent', '--quote', quoteId]);
    expect(again.code).toBe(6);
    expect(again.stderr).toMatch(/used by instance/);
    const both = await cli.run(['rent', node.id, '--gpu-type', 'H100']);
    expect(both.code).toBe(2);
    for (const id of [instance.id, (json(byQuote.stdout) as { id: string }).id]) await api('POST', `/v1/instances/${id}/terminate`);
  });

  it('rent --wait waits while it provisions, then prints the ssh command', async () => {
    const waiting = cli.start(['rent', freshNode(), '--hours', '1', '--name', 'waited', '--wait']);
    waiting.child.stdin!.end();
    let id = '';
    await until('the rental to exist', async () => {
      const mine = (await api<{ id: string; name: string }[]>('GET', '/v1/instances')).find((i) => i.name === 'waited');
      id = mine?.id ?? '';
      return Boolean(mine);
    });
    expect(waiting.output().code).toBeNull();
    world.clock.advance(120_000);
    const run = await waiting.done;
    expect(run.code, run.stderr).toBe(0);
    const instance = await api('GET', `/v1/instances/${id}`);
    expect(instance.status).toBe('running');
    expect(run.stdout).toContain(`${id} is running.`);
    expect(run.stdout).toContain(`root@${instance.ssh_host}`);
    await api('POST', `/v1/instances/${id}/terminate`);
  });

  it('schedule-removal with a span or a time, cancel; terminate; reboot of a terminated machine exits 6 (409)', async () => {
    await world.clock.advance(120_000);
    await api('GET', `/v1/instances/${instanceId}`);
    const scheduled = await cli.run(['schedule-removal', instanceId, '90m']);
    expect(scheduled.code, scheduled.stderr).toBe(0);
    expect(scheduled.stdout).toContain('is removed in 1h 29m');
    const at = new Date(world.clock.now().getTime() + 3_600_000).toISOString();
    const exact = await cli.run(['schedule-removal', instanceId, at, '--json']);
    expect((json(exact.stdout) as { removal_scheduled_at: string }).removal_scheduled_at).toBe(at);
    const cancelled = await cli.run(['schedule-removal', instanceId, 'cancel']);
    expect(cancelled.stdout).toContain('no removal scheduled');

    const terminated = await cli.run(['terminate', instanceId]);
    expect(terminated.code, terminated.stderr).toBe(0);
    expect(terminated.stdout).toMatch(new RegExp(`^${instanceId} is (terminating|terminated) \\(charged \\$\\d+\\.\\d\\d\\)`));
    const reboot = await cli.run(['reboot', instanceId]);
    expect(reboot.code, reboot.stderr).toBe(6);
    expect(reboot.stderr).toMatch(/^error: /);
  });

  it("another tenant's or an unknown instance: exit 4 with the API's detail", async () => {
    const other = await world.api.newTenant('other');
    const run = await cli.run(['show', instanceId], { env: { GPUCTL_TOKEN: other.token } });
    expect(run.code, run.stderr).toBe(4);
    const detail = (await world.api.call('GET', `/v1/instances/${instanceId}`, { token: other.token })).body.detail as string;
    expect(run.stderr).toBe(`error: ${detail}\n`);
  });

  it('a rental the balance cannot pay: exit 5 (402); a node id the API refuses: exit 8 (422)', async () => {
    const poor = await world.api.newTenant('poor');
    const unpaid = await cli.run(['rent', freshNode(), '--hours', '1'], { env: { GPUCTL_TOKEN: poor.token } });
    expect(unpaid.code, unpaid.stderr).toBe(5);
    expect(unpaid.stderr).toMatch(/^error: /);
    expect(await world.api.call('GET', '/v1/instances', { token: poor.token }).then((r) => r.body)).toEqual([]);
    const invalid = await cli.run(['rent', 'x']);
    expect(invalid.code, invalid.stderr).toBe(8);
    expect(invalid.stderr).toContain('node_id');
  });
});

describe('billing', () => {
  it('balance, ledger: money from integer cents; --json the API answers', async () => {
    const balance = await cli.run(['balance']);
    expect(balance.code, balance.stderr).toBe(0);
    const account = await api('GET', '/v1/billing/account');
    const dollars = (c: number) => `${c < 0 ? '-' : ''}$${Math.trunc(Math.abs(c) / 100).toLocaleString('en-US')}.${String(Math.abs(c) % 100).padStart(2, '0')}`;
    expect(balance.stdout).toMatch(new RegExp(`^balance:\\s+${dollars(account.balance_cents).replace('$', '\\$')}$`, 'm'));
    expect(json((await cli.run(['balance', '--json'])).stdout)).toEqual(await api('GET', '/v1/billing/account'));

    const ledger = await cli.run(['ledger', '--limit', '3']);
    expect(ledger.code, ledger.stderr).toBe(0);
    expect(ledger.stdout).toMatch(/^WHEN\s+KIND\s+AMOUNT\s+BALANCE/);
    expect(ledger.stdout.trim().split('\n')).toHaveLength(4);
    expect((await cli.run(['ledger'])).stdout).toMatch(/credit\s+\$50\.00\s+\$50\.00\s+test funds/);
    expect(json((await cli.run(['ledger', '--json'])).stdout)).toEqual(await api('GET', '/v1/billing/ledger'));
  });

  it('budget set, show and clear: the spend of the month against it; bad percents exit 8 with the field', async () => {
    const none = await cli.run(['budget', 'show']);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/no monthly budget/);
    const set = await cli.run(['budget', 'set', '250', '--alerts', '80,50', '--stop']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/^budget:\s+\$250\.00 a month/m);
    expect(set.stdout).toMatch(/^alerts:\s+50 %, 80 %$/m);
    expect(set.stdout).toMatch(/^at 100 %:\s+renting pauses/m);
    expect(json((await cli.run(['budget', 'show', '--json'])).stdout)).toEqual(await api('GET', '/v1/billing/budget'));
    const twice = await cli.run(['budget', 'set', '250', '--alerts', '50,50']);
    expect(twice.code).toBe(8);
    expect(twice.stderr).toContain('alert_percents');
    expect((await cli.run(['budget', 'clear'])).code).toBe(0);
    expect((await cli.run(['budget', 'show'])).code).not.toBe(0);
  });

  it('deposit asks for a transfer (pending); 0 USD exits 8 with the detail; checkout prints the page', async () => {
    const deposit = await cli.run(['deposit', '500', '--reference', 'INV-1']);
    expect(deposit.code, deposit.stderr).toBe(0);
    expect(deposit.stdout).toMatch(/^Deposit dep_[a-z0-9]+ of \$500\.00 is pending/);
    const zero = await cli.run(['deposit', '0']);
    expect(zero.code, zero.stderr).toBe(8);
    expect(zero.stderr).toContain('amount_usd');

    const checkout = await cli.run(['checkout', '20.50', '--json']);
    expect(checkout.code, checkout.stderr).toBe(0);
    const session = json(checkout.stdout) as { url: string; amount_cents: number };
    expect(session.amount_cents).toBe(2050);
    const printed = await cli.run(['checkout', '20']);
    expect(printed.stdout).toMatch(/^Pay \$20\.00 at:\nhttp.*\/v1\/payments\/manual\/\S+\n$/);
  });

  it('stop asks for confirmation: without a terminal it needs --yes (exit 2); with it, machines stop and renting pauses', async () => {
    const unconfirmed = await cli.run(['stop']);
    expect(unconfirmed.code, unconfirmed.stderr).toBe(2);
    expect(unconfirmed.stderr).toContain('--yes');
    expect((await api('GET', '/v1/billing/account')).rentals).toBe('open');
    const stopped = await cli.run(['stop', '--yes', '--reason', 'cli test']);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toMatch(/renting is paused/);
    expect((await api('GET', '/v1/billing/account')).pause).toMatchObject({ kind: 'emergency_stop', reason: 'cli test' });
    const resumed = await cli.run(['resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^Renting is open/);
  });
});

describe('tokens', () => {
  it('create with scopes and caps prints the secret once; ls; revoke; the revoked token exits 3', async () => {
    const created = await cli.run(['tokens', 'create', '--name', 'agent', '--scopes', 'read,rent', '--spend-limit', '25', '--max-hours', '8', '--max-burn', '5', '--expires', '30d', '--idle-timeout', '2h', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const token = json(created.stdout) as { id: string; token: string; scopes: string[]; spend_limit_cents: number; max_rental_hours: number; expires_at: string };
    expect(token).toMatchObject({ scopes: ['read', 'rent'], spend_limit_cents: 2500, max_rental_hours: 8, max_burn_cents_per_hour: 500, burn_cents_per_hour: 0, idle_timeout_minutes: 120 });
    expect(Date.parse(token.expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const ls = await cli.run(['tokens', 'ls']);
    expect(ls.stdout).toMatch(new RegExp(`${token.id}\\s+agent\\s+api\\s+read,rent\\s+\\$25\\.00\\s+\\$0\\.00\\s+8\\s+\\$0\\.00 of \\$5\\.00`));
    expect(json((await cli.run(['tokens', 'ls', '--json'])).stdout)).toEqual(await api('GET', '/v1/tokens'));

    const whoami = await cli.run(['whoami'], { env: { GPUCTL_TOKEN: token.token } });
    expect(whoami.stdout).toMatch(/^spend cap:\s+\$25\.00 \(\$0\.00 committed\)$/m);
    expect(whoami.stdout).toMatch(/^burn:\s+\$0\.00 an hour of \$5\.00 \(\$5\.00 left\)$/m);
    const forbidden = await cli.run(['tokens', 'create'], { env: { GPUCTL_TOKEN: token.token } });
    expect(forbidden.code, forbidden.stderr).toBe(3);

    const revoked = await cli.run(['tokens', 'revoke', token.id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`Revoked ${token.id}\n`);
    const after = await cli.run(['ls'], { env: { GPUCTL_TOKEN: token.token } });
    expect(after.code, after.stderr).toBe(3);
  });
});

describe('catalog', () => {
  it('ssh-keys add, ls, rm; images add, ls; templates create, ls; volumes create, ls; unknown ids exit 4', async () => {
    const key = sshKeygen('ed25519');
    const file = join(cli.configHome, 'laptop.pub');
    writeFileSync(file, `${key.publicLine}\n`);
    const added = await cli.run(['ssh-keys', 'add', file, '--name', 'laptop', '--json']);
    expect(added.code, added.stderr).toBe(0);
    const sshKey = json(added.stdout) as { id: string; fingerprint: string };
    expect(sshKey.fingerprint).toBe(key.fingerprint);
    const keys = await cli.run(['ssh-keys', 'ls']);
    expect(keys.stdout).toMatch(new RegExp(`${sshKey.id}\\s+laptop\\s+${key.fingerprint.replace(/[+/]/g, '\\$&')}`));
    expect(json((await cli.run(['ssh-keys', 'ls', '--json'])).stdout)).toEqual(await api('GET', '/v1/ssh-keys'));

    const image = await cli.run(['images', 'add', 'trainer', 'ghcr.io/acme/trainer:1.4', '--registry-username', 'acme', '--registry-password-stdin', '--json'], { input: 'hunter2-token\n' });
    expect(image.code, image.stderr).toBe(0);
    const imageId = (json(image.stdout) as { id: string; has_registry_password: boolean }).id;
    expect(json(image.stdout)).toMatchObject({ has_registry_password: true, registry_username: 'acme' });
    expect(json((await cli.run(['images', 'ls', '--json'])).stdout)).toEqual(await api('GET', '/v1/images'));

    const template = await cli.run(['templates', 'create', 'big', '--image-id', imageId, '--ssh-keys', sshKey.id, '--hours', '4', '--env', 'A=1', '--env', 'B=x=y', '--ports', '8080,22', '--search', '{"gpu_count":1}', '--json']);
    expect(template.code, template.stderr).toBe(0);
    expect(json(template.stdout)).toMatchObject({ name: 'big', image_id: imageId, ssh_key_ids: [sshKey.id], termination_hours: 4, env: { A: '1', B: 'x=y' }, ports: [8080, 22], search: { gpu_count: 1 } });
    const templates = await cli.run(['templates', 'ls']);
    expect(templates.stdout).toMatch(new RegExp(`big\\s+${imageId}\\s+4\\s+gpu_count=1`));

    const region = (await sandboxOf(world.api).listOffers())[0]!.region!;
    const volume = await cli.run(['volumes', 'create', 'data', '--size-gb', '10', '--provider', 'sandbox', '--region', region]);
    expect(volume.code, volume.stderr).toBe(0);
    expect(volume.stdout).toMatch(/^Made vol_[a-z0-9]+ \(10 GB at sandbox /);
    expect(json((await cli.run(['volumes', 'ls', '--json'])).stdout)).toEqual(await api('GET', '/v1/volumes'));

    const inUse = await cli.run(['ssh-keys', 'rm', sshKey.id]);
    expect(inUse.code, inUse.stderr).toBe(6);
    expect(inUse.stderr).toContain('used by template');
    const templateId = (json(template.stdout) as { id: string }).id;
    expect((await cli.run(['templates', 'rm', templateId])).stdout).toBe(`Deleted ${templateId}\n`);
    const removed = await cli.run(['ssh-keys', 'rm', sshKey.id]);
    expect(removed.code, removed.stderr).toBe(0);
    const gone = await cli.run(['ssh-keys', 'rm', sshKey.id]);
    expect(gone.code, gone.stderr).toBe(4);
  });
});
