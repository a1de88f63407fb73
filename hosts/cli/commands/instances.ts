import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Schema } from '../../client/api-client.ts';
import { connect, example, expectOk, note, optionsOf, print, printJson, withJson, type Session } from '../context.ts';
import { CliError, EXIT } from '../exit-codes.ts';
import { fields, money, rate, relative, table } from '../format.ts';
import { integer, moment } from '../parse.ts';
import { sleep, spinner } from '../spinner.ts';
import { filterFlags, filterQuery, type FilterOptions } from './market.ts';

type Instance = Schema<'InstanceOut'>;

const POLL_MS = 2_000;
const SAVED_KEY_ID = /^key_[a-z0-9]+$/;

/**
 * `ssh -p PORT USER@HOST` once the machine has an address: the user is the one the instance states (`ssh_user`,
 * from its provider); without one, ssh's own default (the local user, or the ssh configuration's).
 */
const sshCommand = (instance: Instance) =>
  instance.ssh_host
    ? `ssh${instance.ssh_port && instance.ssh_port !== 22 ? ` -p ${instance.ssh_port}` : ''} ${instance.ssh_user ? `${instance.ssh_user}@` : ''}${instance.ssh_host}`
    : null;

/** When it goes away: the scheduled removal, else the end of its window. */
const endsAt = (instance: Instance) => instance.removal_scheduled_at ?? instance.window_ends_at;

function describe(instance: Instance): string {
  return fields([
    ['id', instance.id],
    ['name', instance.name],
    ['status', instance.status + (instance.failure ? ` (${instance.failure})` : '')],
    ['node', `${instance.node_id} (${instance.provider})`],
    ['gpus', `${instance.gpu_count}x ${instance.gpu_type}`],
    ['rate', rate(instance.rate_cents_per_hour)],
    ['charged', money(instance.charged_cents)],
    ['created', relative(instance.created_at)],
    ['started', relative(instance.started_at)],
    ['paid until', relative(instance.paid_until)],
    ['removal', relative(instance.removal_scheduled_at)],
    ['window ends', relative(instance.window_ends_at)],
    ['terminated', relative(instance.terminated_at)],
    ['image', instance.image],
    ['template', instance.template_id],
    ['volumes', instance.volume_ids.join(', ')],
    ['ssh', sshCommand(instance)],
    ['recovery', instance.recovery && `${instance.recovery.attempts_left} of ${instance.recovery.max_attempts} replacements left${instance.recovery.failure ? ` (${instance.recovery.failure})` : ''}`],
    ['replaces', instance.replaces],
    ['replaced by', instance.replaced_by],
  ]);
}

/** A file holding a public key, or the id of a saved key (key_...). */
function sshKeyBody(value: string): { ssh_public_key: string } | { ssh_key_id: string } {
  if (existsSync(value)) return { ssh_public_key: readFileSync(value, 'utf8').trim() };
  if (SAVED_KEY_ID.test(value)) return { ssh_key_id: value };
  throw new CliError(`--ssh-key ${value}: no such file, and not a saved key id (key_...)`, EXIT.usage);
}

async function waitUntilRunning(session: Session, first: Instance): Promise<Instance> {
  const started = Date.now();
  let instance = first;
  const progress = spinner(() => `${instance.id} ${instance.status} (${Math.floor((Date.now() - started) / 1000)} s)`);
  try {
    while (instance.status === 'provisioning' || instance.status === 'rebooting') {
      await sleep(POLL_MS);
      instance = await expectOk(session, session.client.GET('/v1/instances/{instance_id}', { params: { path: { instance_id: instance.id } } }));
    }
  } finally {
    progress.stop();
  }
  if (instance.status !== 'running') {
    throw new CliError(`${instance.id} is ${instance.status}${instance.failure ? `: ${instance.failure}` : ''}`, EXIT.unexpected);
  }
  return instance;
}

const instancePath = (id: string) => ({ params: { path: { instance_id: id } } });

/** The node a rental or quote is of: a node id, or the search its filter flags make (exactly one). */
function nodeOrSearch(nodeId: string | undefined, options: FilterOptions): { node_id: string } | { search: Record<string, unknown> } | Record<string, never> {
  const search = filterQuery(options) as Record<string, unknown>;
  const searching = Object.keys(search).length > 0;
  if (nodeId && searching) throw new CliError('name a node id or search flags (--gpu-type, --max-price...), not both', EXIT.usage);
  return nodeId ? { node_id: nodeId } : searching ? { search } : {};
}

const isInstance = (answer: Instance | Figures): answer is Instance => 'status' in answer;

type Figures = Schema<'RentalDryRunOut'>;

const figuresLine = (f: Figures) =>
  `${f.node_id} at ${rate(f.rate_cents_per_hour)}: ${money(f.charged_now_cents)} charged now, ${money(f.commitment_cents)} committed` +
  (f.cap_remaining_after_cents === null ? '' : `, ${money(f.cap_remaining_after_cents)} of the cap left after`);

export function registerInstances(program: Command): void {
  example(
    withJson(
      filterFlags(
        program
          .command('rent')
          .description('Rent a node from `gpuctl gpus`, the cheapest match of search flags, or a quote: the first hour is charged now')
          .argument('[node_id]', 'a node id from `gpuctl gpus`, e.g. sandbox:100123; or search flags, or --quote'),
      )
        .option('--quote <id>', 'a quote from `gpuctl quote` (quo_...): its node and hours, at no more than its price')
        .option('--dry-run', 'show what it would charge and commit, and rent nothing')
        .option('--hours <n>', 'shutdown window: removed this many hours after creation (required by a capped token)', integer(1, 8_760))
        .option('--name <name>', 'a name to know it by')
        .option('--ssh-key <file|id>', 'a public key file (~/.ssh/id_ed25519.pub) or a saved key id (key_...)')
        .option('--template <id>', 'a saved template (tpl_...); flags given here win over it')
        .option('--idempotency-key <key>', 'retrying with the same key never rents twice (default: a new random key)')
        .option('--recover <attempts>', 'managed recovery: when the machine is lost, preempted or fails, rent a replacement like it at no more than its rate, at most this many times', integer(1, 10))
        .option('--wait', 'wait until it runs, then print the ssh command'),
    ),
    'gpuctl rent sandbox:100123 --hours 4 --name trainer --ssh-key ~/.ssh/id_ed25519.pub --wait',
    'gpuctl rent --gpu-type H100 --max-price 2.5 --hours 4 --ssh-key ~/.ssh/id_ed25519.pub',
    'gpuctl rent --quote quo_abc123 --ssh-key key_abc123',
    'gpuctl rent sandbox:100123 --hours 8 --recover 3',
  ).action(async (nodeId: string | undefined, _options: unknown, command: Command) => {
    type RentOptions = FilterOptions & { quote?: string; dryRun?: boolean; hours?: number; name?: string; sshKey?: string; template?: string; idempotencyKey?: string; recover?: number; wait?: boolean; json?: boolean };
    const options = optionsOf<RentOptions>(command);
    const session = connect(command);
    const body = {
      ...nodeOrSearch(nodeId, options),
      ...(options.quote && { quote_id: options.quote }),
      ...(options.dryRun && { dry_run: true }),
      idempotency_key: options.idempotencyKey ?? randomUUID(),
      ...(options.hours && { termination_hours: options.hours }),
      ...(options.name && { name: options.name }),
      ...(options.sshKey && sshKeyBody(options.sshKey)),
      ...(options.template && { template_id: options.template }),
      ...(options.recover && { recovery: { max_attempts: options.recover } }),
    };
    const answer = await expectOk(session, session.client.POST('/v1/instances', { body }));
    if (!isInstance(answer)) return options.json ? printJson(answer) : print(`Dry run, nothing rented: ${figuresLine(answer)}`);
    let instance = answer;
    if (!options.wait) {
      if (options.json) return printJson(instance);
      return print(`Rented ${instance.id} on ${instance.node_id} at ${rate(instance.rate_cents_per_hour)} (${money(instance.charged_cents)} charged); ${instance.status}. Wait for it: gpuctl show ${instance.id}`);
    }
    if (!options.json) note(`Rented ${instance.id} on ${instance.node_id} at ${rate(instance.rate_cents_per_hour)}; waiting for it to start...`);
    instance = await waitUntilRunning(session, instance);
    if (options.json) return printJson(instance);
    const ssh = sshCommand(instance);
    print(`${instance.id} is running.${ssh ? `\n${ssh}` : ''}`);
  });

  example(
    withJson(
      filterFlags(
        program
          .command('quote')
          .description('Price a rental now and hold the price 120 s; `gpuctl rent --quote <id>` rents it at no more. Nothing is charged')
          .argument('[node_id]', 'a node id from `gpuctl gpus`; or search flags'),
      )
        .option('--hours <n>', 'the shutdown window it is for (required by a capped token)', integer(1, 8_760))
        .option('--name <name>', "the rental's name"),
    ),
    'gpuctl quote --gpu-type H100 --max-price 2.5 --hours 4',
  ).action(async (nodeId: string | undefined, _options: unknown, command: Command) => {
    const options = optionsOf<FilterOptions & { hours?: number; name?: string; json?: boolean }>(command);
    const session = connect(command);
    const body = { ...nodeOrSearch(nodeId, options), ...(options.hours && { termination_hours: options.hours }), ...(options.name && { name: options.name }) };
    const quote = await expectOk(session, session.client.POST('/v1/quotes', { body }));
    if (options.json) return printJson(quote);
    print(`${quote.id}: ${figuresLine(quote)}; valid until ${quote.expires_at}. Rent it: gpuctl rent --quote ${quote.id}`);
  });

  example(withJson(program.command('ls').description('Your instances, newest first')), 'gpuctl ls', 'gpuctl ls --json | jq -r ".[].id"').action(
    async (_options: unknown, command: Command) => {
      const session = connect(command);
      const instances = await expectOk(session, session.client.GET('/v1/instances'));
      if (optionsOf(command).json) return printJson(instances);
      print(
        table(
          ['ID', 'NAME', 'STATUS', 'GPUS', 'RATE', 'CHARGED', 'CREATED', 'ENDS', 'SSH'],
          instances.map((i) => [i.id, i.name, i.status, `${i.gpu_count}x ${i.gpu_type}`, rate(i.rate_cents_per_hour), money(i.charged_cents), relative(i.created_at), relative(endsAt(i)), sshCommand(i)]),
          'No instances yet: find a node with `gpuctl gpus`, then `gpuctl rent <node_id>`.',
        ),
      );
    },
  );

  example(withJson(program.command('show').description('One instance, as its provider reports it now').argument('<id>', 'an instance id (ins_...)')), 'gpuctl show ins_abc123').action(
    async (id: string, _options: unknown, command: Command) => {
      const session = connect(command);
      const instance = await expectOk(session, session.client.GET('/v1/instances/{instance_id}', instancePath(id)));
      if (optionsOf(command).json) return printJson(instance);
      print(describe(instance));
    },
  );

  for (const [name, path, what, done] of [
    ['terminate', '/v1/instances/{instance_id}/terminate', 'Stop and remove an instance now; unused time after the first hour is refunded', 'terminating'],
    ['reboot', '/v1/instances/{instance_id}/reboot', 'Reboot a running instance', 'rebooting'],
  ] as const) {
    example(withJson(program.command(name).description(what).argument('<id>', 'an instance id (ins_...)')), `gpuctl ${name} ins_abc123`).action(
      async (id: string, _options: unknown, command: Command) => {
        const session = connect(command);
        const instance = await expectOk(session, session.client.POST(path, instancePath(id)));
        if (optionsOf(command).json) return printJson(instance);
        print(`${instance.id} is ${instance.status === 'running' && name === 'reboot' ? done : instance.status} (charged ${money(instance.charged_cents)})`);
      },
    );
  }

  example(
    withJson(
      program
        .command('schedule-removal')
        .description('Set when an instance removes itself (the last block is charged pro rata); "cancel" clears it')
        .argument('<id>', 'an instance id (ins_...)')
        .argument('<time>', 'ISO 8601 (2026-11-24T18:00:00Z), a span from now (2h, 90m, 1d), or cancel'),
    ),
    'gpuctl schedule-removal ins_abc123 3h',
    'gpuctl schedule-removal ins_abc123 2026-11-24T18:00:00Z',
  ).action(async (id: string, time: string, _options: unknown, command: Command) => {
    const session = connect(command);
    const instance =
      time.trim().toLowerCase() === 'cancel'
        ? await expectOk(session, session.client.DELETE('/v1/instances/{instance_id}/schedule-removal', instancePath(id)))
        : await expectOk(session, session.client.POST('/v1/instances/{instance_id}/schedule-removal', { ...instancePath(id), body: { removal_scheduled_at: moment(time) } }));
    if (optionsOf(command).json) return printJson(instance);
    print(instance.removal_scheduled_at ? `${instance.id} is removed ${relative(instance.removal_scheduled_at)} (${instance.removal_scheduled_at})` : `${instance.id}: no removal scheduled`);
  });
}
