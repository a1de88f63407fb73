import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { connect, example, expectOk, optionsOf, print, printJson, withJson } from '../context.ts';
import { money, relative, table } from '../format.ts';
import { integer, list } from '../parse.ts';
import { secret } from '../prompt.ts';

type Action = (...args: any[]) => Promise<void>;

/** `<group> ls`, with the table of the group's list. */
function lsCommand(group: Command, what: string, run: (command: Command) => Promise<void>): void {
  example(withJson(group.command('ls').description(`Your ${what}`)), `gpuctl ${group.name()} ls`).action(((_options: unknown, command: Command) => run(command)) as Action);
}

/** `<group> rm <id>`: a 204, so --json prints nothing. */
function rmCommand(group: Command, what: string, idExample: string, remove: (command: Command, id: string) => Promise<void>): void {
  example(withJson(group.command('rm').description(`Delete ${what}`).argument('<id>', `its id (${idExample.split('_')[0]}_...)`)), `gpuctl ${group.name()} rm ${idExample}`).action(
    (async (id: string, _options: unknown, command: Command) => {
      await remove(command, id);
      if (!optionsOf(command).json) print(`Deleted ${id}`);
    }) as Action,
  );
}

const envPair = (text: string, previous: Record<string, string> = {}) => {
  const at = text.indexOf('=');
  if (at < 1) throw new InvalidArgumentError('must be NAME=value');
  return { ...previous, [text.slice(0, at)]: text.slice(at + 1) };
};

const ports = (text: string) => list(text).map((port) => integer(1, 65_535)(port));

const jsonObject = (text: string) => {
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, string | number | boolean>;
  } catch {
    /* said below */
  }
  throw new InvalidArgumentError('must be a JSON object of GET /v1/gpus filters, e.g. {"gpu_type":"H100","gpu_count":8}');
};

function sshKeys(program: Command): void {
  const group = example(program.command('ssh-keys').description('Saved SSH public keys, installed on machines you rent'), 'gpuctl ssh-keys ls');
  lsCommand(group, 'SSH keys, oldest first', async (command) => {
    const session = connect(command);
    const keys = await expectOk(session, session.client.GET('/v1/ssh-keys'));
    if (optionsOf(command).json) return printJson(keys);
    print(table(['ID', 'NAME', 'FINGERPRINT', 'CREATED'], keys.map((k) => [k.id, k.name, k.fingerprint, relative(k.created_at)]), 'No SSH keys yet: gpuctl ssh-keys add ~/.ssh/id_ed25519.pub'));
  });
  example(
    withJson(group.command('add').description('Save a public key from a file').argument('<file>', 'e.g. ~/.ssh/id_ed25519.pub').option('--name <name>', 'default: the file name')),
    'gpuctl ssh-keys add ~/.ssh/id_ed25519.pub --name laptop',
  ).action(async (file: string, _options: unknown, command: Command) => {
    const options = optionsOf<{ name?: string }>(command);
    const session = connect(command);
    const key = await expectOk(session, session.client.POST('/v1/ssh-keys', { body: { name: options.name ?? file.split('/').pop() ?? file, public_key: readFileSync(file, 'utf8') } }));
    if (options.json) return printJson(key);
    print(`Saved ${key.id} (${key.fingerprint}); rent with it: gpuctl rent <node_id> --ssh-key ${key.id}`);
  });
  rmCommand(group, 'an SSH key (machines already running keep it)', 'key_abc123', async (command, id) => {
    const session = connect(command);
    await expectOk(session, session.client.DELETE('/v1/ssh-keys/{key_id}', { params: { path: { key_id: id } } }));
  });
}

function images(program: Command): void {
  const group = example(program.command('images').description('Saved container images, with their private registry credentials'), 'gpuctl images ls');
  lsCommand(group, 'images, oldest first', async (command) => {
    const session = connect(command);
    const all = await expectOk(session, session.client.GET('/v1/images'));
    if (optionsOf(command).json) return printJson(all);
    print(table(['ID', 'NAME', 'IMAGE', 'REGISTRY USER', 'COMMAND', 'CREATED'], all.map((i) => [i.id, i.name, i.image, i.registry_username, i.command, relative(i.created_at)]), 'No images yet.'));
  });
  example(
    withJson(
      group
        .command('add')
        .description('Save an image')
        .argument('<name>', 'a name for it')
        .argument('<image>', 'a container reference, e.g. ghcr.io/acme/trainer:1.4')
        .option('--registry-username <user>', 'for a private registry')
        .option('--registry-password-stdin', 'read the registry password from stdin (kept encrypted, never answered)')
        .option('--command <command>', 'the command to run instead of the image default'),
    ),
    'echo "$GHCR_TOKEN" | gpuctl images add trainer ghcr.io/acme/trainer:1.4 --registry-username acme --registry-password-stdin',
  ).action(async (name: string, image: string, _options: unknown, command: Command) => {
    const options = optionsOf<{ registryUsername?: string; registryPasswordStdin?: boolean; command?: string }>(command);
    const session = connect(command);
    const password = options.registryPasswordStdin ? await secret('Registry password: ') : undefined;
    const saved = await expectOk(
      session,
      session.client.POST('/v1/images', {
        body: {
          name,
          image,
          ...(options.registryUsername && { registry_username: options.registryUsername }),
          ...(password && { registry_password: password }),
          ...(options.command && { command: options.command }),
        },
      }),
    );
    if (options.json) return printJson(saved);
    print(`Saved ${saved.id} (${saved.image})`);
  });
  rmCommand(group, 'an image and its saved credentials', 'img_abc123', async (command, id) => {
    const session = connect(command);
    await expectOk(session, session.client.DELETE('/v1/images/{image_id}', { params: { path: { image_id: id } } }));
  });
}

function templates(program: Command): void {
  const group = example(program.command('templates').description('Rental templates: image, SSH keys, env, ports, startup script, window, volumes, the machine wanted'), 'gpuctl templates ls');
  lsCommand(group, 'templates, oldest first', async (command) => {
    const session = connect(command);
    const all = await expectOk(session, session.client.GET('/v1/templates'));
    if (optionsOf(command).json) return printJson(all);
    print(
      table(
        ['ID', 'NAME', 'IMAGE', 'HOURS', 'SEARCH', 'CREATED'],
        all.map((t) => [t.id, t.name, t.image ?? t.image_id, t.termination_hours, Object.entries(t.search).map(([k, v]) => `${k}=${String(v)}`).join(' '), relative(t.created_at)]),
        'No templates yet.',
      ),
    );
  });
  example(
    withJson(
      group
        .command('create')
        .description('Save a template; rent from it with `gpuctl rent <node_id> --template <id>`')
        .argument('<name>', 'a name for it')
        .option('--image <reference>', 'a container reference')
        .option('--image-id <id>', 'a saved image (img_...), instead of --image')
        .option('--ssh-keys <ids>', 'saved SSH key ids, comma separated', list)
        .option('--env <NAME=value>', 'an environment variable (repeatable)', envPair)
        .option('--ports <list>', 'container ports to expose, comma separated', ports)
        .option('--startup-script <file>', 'a shell script run once the machine is up')
        .option('--hours <n>', 'shutdown window of its rentals', integer(1, 8_760))
        .option('--volumes <ids>', 'volume ids to attach, comma separated', list)
        .option('--search <json>', 'the machine it wants, as GET /v1/gpus filters', jsonObject),
    ),
    'gpuctl templates create trainer --image pytorch/pytorch:latest --ssh-keys key_abc123 --hours 8 --search \'{"gpu_type":"H100","gpu_count":8}\'',
  ).action(async (name: string, _options: unknown, command: Command) => {
    const o = optionsOf<{ image?: string; imageId?: string; sshKeys?: string[]; env?: Record<string, string>; ports?: number[]; startupScript?: string; hours?: number; volumes?: string[]; search?: Record<string, string | number | boolean> }>(command);
    const session = connect(command);
    const created = await expectOk(
      session,
      session.client.POST('/v1/templates', {
        body: {
          name,
          ...(o.image && { image: o.image }),
          ...(o.imageId && { image_id: o.imageId }),
          ...(o.sshKeys && { ssh_key_ids: o.sshKeys }),
          ...(o.env && { env: o.env }),
          ...(o.ports && { ports: o.ports }),
          ...(o.startupScript && { startup_script: readFileSync(o.startupScript, 'utf8') }),
          ...(o.hours && { termination_hours: o.hours }),
          ...(o.volumes && { volume_ids: o.volumes }),
          ...(o.search && { search: o.search }),
        },
      }),
    );
    if (o.json) return printJson(created);
    print(`Saved ${created.id}; rent from it: gpuctl rent <node_id> --template ${created.id}`);
  });
  rmCommand(group, 'a template (machines rented from it are not touched)', 'tpl_abc123', async (command, id) => {
    const session = connect(command);
    await expectOk(session, session.client.DELETE('/v1/templates/{template_id}', { params: { path: { template_id: id } } }));
  });
}

function volumes(program: Command): void {
  const group = example(program.command('volumes').description('Persistent volumes: storage billed per started hour, attached to machines in their region'), 'gpuctl volumes ls');
  lsCommand(group, 'volumes', async (command) => {
    const session = connect(command);
    const all = await expectOk(session, session.client.GET('/v1/volumes'));
    if (optionsOf(command).json) return printJson(all);
    print(
      table(
        ['ID', 'NAME', 'SIZE', 'WHERE', 'STATUS', 'ATTACHED TO', 'PRICE', 'CREATED'],
        all.map((v) => [v.id, v.name, `${v.size_gb} GB`, `${v.provider} ${v.region}`, v.status, v.attached_instance_id, `${money(v.price_per_gb_month_cents)}/GB-month`, relative(v.created_at)]),
        'No volumes yet.',
      ),
    );
  });
  example(
    withJson(
      group
        .command('create')
        .description('Make a volume at a provider that has them')
        .argument('<name>', 'a name for it')
        .requiredOption('--size-gb <gb>', 'size, 1 to 10000', integer(1, 10_000))
        .requiredOption('--provider <name>', 'a provider with volumes (`gpuctl providers` says which)')
        .requiredOption('--region <region>', 'machines that use it must be there')
        .option('--hours <hours>', 'delete it when these hours end (required with a capped token)', integer(1, 8_760)),
    ),
    'gpuctl volumes create data --size-gb 100 --provider sandbox --region us-east-1 --hours 48',
  ).action(async (name: string, _options: unknown, command: Command) => {
    const o = optionsOf<{ sizeGb: number; provider: string; region: string; hours?: number }>(command);
    const session = connect(command);
    const body = { name, size_gb: o.sizeGb, provider: o.provider, region: o.region, ...(o.hours !== undefined && { hours: o.hours }) };
    const created = await expectOk(session, session.client.POST('/v1/volumes', { body }));
    if (o.json) return printJson(created);
    if (created.status === 'creating') {
      // the provider gave no answer: the sweep adopts the volume once the provider shows it, or fails it at no cost
      print(`Asked for ${created.id} (${created.size_gb} GB at ${created.provider} ${created.region}): ${created.provider} gave no answer yet; it stays creating until it is found there (available) or not within 15 minutes (failed, nothing billed)`);
      return;
    }
    print(`Made ${created.id} (${created.size_gb} GB at ${created.provider} ${created.region}): ${created.status}${created.ends_at ? `, deleted at ${created.ends_at}` : ''}`);
  });
  rmCommand(group, 'a volume no machine uses (its storage is billed up to now)', 'vol_abc123', async (command, id) => {
    const session = connect(command);
    await expectOk(session, session.client.DELETE('/v1/volumes/{volume_id}', { params: { path: { volume_id: id } } }));
  });
}

export function registerCatalog(program: Command): void {
  sshKeys(program);
  images(program);
  templates(program);
  volumes(program);
}
