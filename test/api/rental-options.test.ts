import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * A rental with what the catalog keeps: saved keys, images, templates, env, ports and a
 * startup script reach the provider's create; the template's fields stand unless the request sends its own.
 */
let world: RentalWorld;
beforeAll(async () => {
  // a secrets key, so images may keep registry passwords (on PostgreSQL the operator sets SECRETS_KEY)
  world = await rentalWorld({ secretsKey: new Uint8Array(32).fill(7) });
});
afterAll(() => world.close());

const keyLine = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'gcp-key-'));
  try {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'me@laptop', '-f', join(dir, 'k')]);
    return readFileSync(join(dir, 'k.pub'), 'utf8').trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
let pick = 0;
const node = async () => (await world.offers((o) => o.rate >= 20 && o.rate <= 400))[pick++]!;
const machineOf = async (instanceId: string) => (await world.sandbox.cloud.listMachines()).find((m) => m.label === instanceId)!;

describe('rentals with saved keys, images and templates', () => {
  it('carry the image, its registry login, keys, env, ports and the startup script to the provider', async () => {
    const { token } = await world.fundedTenant(50);
    const saved = (await world.api.call('POST', '/v1/ssh-keys', { token, body: { name: 'laptop', public_key: keyLine() } })).body;
    const direct = keyLine();
    const image = (await world.api.call('POST', '/v1/images', { token, body: { name: 'trainer', image: 'ghcr.io/acme/train:2.1', registry_username: 'bot', registry_password: 'hunter2-token', command: 'python train.py' } })).body;
    const res = await world.rent(token, {
      node_id: (await node()).id,
      ssh_key_id: saved.id,
      ssh_public_key: direct,
      image_id: image.id,
      env: { WANDB_MODE: 'offline' },
      ports: [8888],
      startup_script: 'echo ready > /tmp/ready',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ image: 'ghcr.io/acme/train:2.1', ssh_key_id: saved.id, template_id: null, volume_ids: [] });
    const machine = await machineOf(res.body.id);
    expect(machine.image).toBe('ghcr.io/acme/train:2.1');
    expect(machine.options).toMatchObject({
      sshPublicKeys: [direct, saved.public_key],
      command: 'python train.py',
      env: { WANDB_MODE: 'offline' },
      ports: [8888],
      startupScript: 'echo ready > /tmp/ready',
    });
    expect(machine.options.registryUsername).toBe('bot');
    expect(machine.options.registryPasswordSha256).toBe(createHash('sha256').update('hunter2-token').digest('hex'));
  });

  it('take a template\'s fields, the request\'s own winning; a template with a search needs no node', async () => {
    const { token } = await world.fundedTenant(50);
    const key = (await world.api.call('POST', '/v1/ssh-keys', { token, body: { name: 'k', public_key: keyLine() } })).body;
    const cheapest = (await world.offers((o) => o.gpuType === 'RTX4090'))[0]!;
    const template = await world.api.call('POST', '/v1/templates', {
      token,
      body: { name: 'notebook', image: 'jupyter/base-notebook:latest', ssh_key_ids: [key.id], env: { MODE: 'template' }, ports: [8888], termination_hours: 3, search: { gpu_type: 'RTX4090', gpu_count: cheapest.gpuCount } },
    });
    expect(template.status, JSON.stringify(template.body)).toBe(201);

    const fromTemplate = await world.rent(token, { template_id: template.body.id });
    expect(fromTemplate.status, JSON.stringify(fromTemplate.body)).toBe(201);
    expect(fromTemplate.body).toMatchObject({ template_id: template.body.id, image: 'jupyter/base-notebook:latest', gpu_type: 'RTX4090', window_ends_at: new Date(world.clock.now().getTime() + 3 * 3_600_000).toISOString() });
    expect((await machineOf(fromTemplate.body.id)).options).toMatchObject({ sshPublicKeys: [key.public_key], env: { MODE: 'template' }, ports: [8888] });

    const overridden = await world.rent(token, { template_id: template.body.id, node_id: (await node()).id, env: { MODE: 'mine' }, ports: [], termination_hours: 1 });
    expect(overridden.status).toBe(201);
    expect((await machineOf(overridden.body.id)).options).toMatchObject({ env: { MODE: 'mine' }, ports: [] });
    expect(overridden.body.window_ends_at).toBe(new Date(world.clock.now().getTime() + 3_600_000).toISOString());

    const noSearch = (await world.api.call('POST', '/v1/templates', { token, body: { name: 'bare' } })).body;
    const needsNode = await world.rent(token, { template_id: noSearch.id });
    expect(needsNode.status).toBe(422);
    expect(needsNode.body.errors[0].loc).toEqual(['body', 'node_id']);
  });

  it('count every option in the idempotency key\'s body: another env with the same key is 409', async () => {
    const { token } = await world.fundedTenant(10);
    const body = { node_id: (await node()).id, idempotency_key: 'env-run', env: { SEED: '1' } };
    expect((await world.rent(token, body)).status).toBe(201);
    expect((await world.rent(token, body)).status).toBe(201);
    expect((await world.rent(token, { ...body, env: { SEED: '2' } })).status).toBe(409);
  });

  it('refuse unknown ids with 422 naming the field, and bad options before anything is charged', async () => {
    const { token } = await world.fundedTenant(10);
    const other = await world.fundedTenant(10);
    const theirs = (await world.api.call('POST', '/v1/images', { token: other.token, body: { name: 'x', image: 'alpine:3' } })).body;
    const id = (await node()).id;
    for (const [body, field] of [
      [{ node_id: id, image_id: theirs.id }, 'image_id'],
      [{ node_id: id, ssh_key_id: 'key_unknown0' }, 'ssh_key_id'],
      [{ node_id: id, template_id: 'tpl_unknown0' }, 'template_id'],
      [{ node_id: id, env: { '1bad': 'x' } }, 'env'],
      [{ node_id: id, ports: [22, 22] }, 'ports'],
      [{ node_id: id, startup_script: 'x'.repeat(70_000) }, 'startup_script'],
    ] as const) {
      const res = await world.rent(token, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(res.body.errors[0].loc[1]).toBe(field);
    }
    expect((await world.balance(token)).balance_cents).toBe(1_000);
  });
});

describe('what a provider cannot carry out', () => {
  it('is a 409 naming the provider and the options, and nothing is charged', async () => {
    const narrow = await rentalWorld({}, { faulty: true });
    try {
      narrow.faults!.narrowedOptions = ['ssh_keys']; // a cloud that installs keys and nothing else, like Lambda
      const { token } = await narrow.fundedTenant(20);
      const nodeId = (await narrow.offers((o) => o.rate <= 400))[0]!.id;
      const res = await narrow.rent(token, { node_id: nodeId, env: { A: '1' }, ports: [80] });
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(/provider sandbox cannot carry out env, ports/);
      expect((await narrow.balance(token)).balance_cents).toBe(2_000);
      const rented = await narrow.rent(token, { node_id: nodeId, ssh_public_key: keyLine() });
      expect(rented.status).toBe(201);
      expect(rented.body.supported_operations).toEqual(['terminate', 'reboot', 'schedule_removal', 'spot', 'ssh_keys']);
    } finally {
      await narrow.close();
    }
  });
});
