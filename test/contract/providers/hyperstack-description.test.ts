import { describe, expect, it } from 'vitest';
import { createHyperstackProvider } from '../../../adapters/providers/hyperstack/index.ts';
import { fastHyperstackConfig } from '../../fakes/hyperstack/adapter-config.ts';
import { startFakeHyperstack } from '../../fakes/hyperstack/server.ts';
import { DescriptionChecker, loadProviderDescription } from '../../support/provider-description.ts';
import { failureOf, machineRequest } from '../provider-contract.ts';

/**
 * The Hyperstack fake against Hyperstack's own OpenAPI description (NexGenCloud/hyperstack-sdk-go api/openapi.yaml):
 * every request of a whole life (offers, environment, key pair, volume, create, read, reboot, a delete refused while
 * creating, delete) is one the description accepts, and every answer one it describes.
 */
const description = loadProviderDescription('hyperstack-openapi.json');

describe.runIf(description.doc)('the Hyperstack fake follows hyperstack-openapi.json', () => {
  it('accepts every request of a rental with a volume, and describes every answer', async () => {
    const fake = await startFakeHyperstack();
    try {
      const provider = createHyperstackProvider(fastHyperstackConfig(fake, { deleteWaitMs: 0 }));
      expect((await provider.listOffers()).length).toBeGreaterThan(0);
      const volume = await provider.createVolume({ label: 'vol_desc1', name: 'data', sizeGb: 10, region: 'CANADA-1' });
      fake.state.bootMs = 60_000;
      const machine = await provider.createMachine(
        machineRequest({ offerId: 'n3-A100x1@CANADA-1', label: 'ins_desc1', sshPublicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDescribed a@b', 'ssh-rsa AAAAB3Second b@c'], startupScript: 'echo hi', volumeIds: [volume.volumeId] }),
      );
      // refused while it is being made
      fake.state.failNext(1, 400, { path: `/core/virtual-machines/${machine.machineId}`, method: 'DELETE', message: 'Cannot delete a virtual machine while it is still creating' });
      fake.state.bootMs = 0;
      expect((await failureOf(provider.terminateMachine(machine.machineId))).kind).toBe('unavailable');
      expect((await provider.getMachine(machine.machineId))?.sshHost).not.toBeNull();
      await provider.listMachines();
      await provider.rebootMachine(machine.machineId);
      expect((await failureOf(provider.deleteVolume(volume.volumeId))).kind).toBe('rejected');
      await provider.terminateMachine(machine.machineId);
      await provider.terminateMachine(machine.machineId);
      await provider.deleteVolume(volume.volumeId);
      await provider.deleteVolume(volume.volumeId);
      expect(await provider.listVolumes()).toEqual([]);

      const exchanges = fake.state.exchanges;
      expect(new Set(exchanges.map((e) => `${e.method} ${e.path.replace(/\/\d+/g, '/{id}')}`))).toEqual(
        new Set([
          'GET /v1/core/flavors', 'GET /v1/pricebook', 'GET /v1/core/regions', 'GET /v1/core/environments', 'POST /v1/core/environments',
          'POST /v1/core/volumes', 'GET /v1/core/volumes/{id}', 'GET /v1/core/keypairs', 'POST /v1/core/keypairs', 'POST /v1/core/virtual-machines',
          'GET /v1/core/virtual-machines/{id}', 'DELETE /v1/core/virtual-machines/{id}', 'GET /v1/core/virtual-machines',
          'GET /v1/core/virtual-machines/{id}/hard-reboot', 'DELETE /v1/core/volumes/{id}', 'GET /v1/core/volumes',
        ]),
      );
      expect(new DescriptionChecker(description.doc!).check(exchanges)).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it('finds a create the description refuses', () => {
    const problems = new DescriptionChecker(description.doc!).check([
      { method: 'POST', path: '/v1/core/virtual-machines', query: {}, headers: { api_key: 'k' }, body: { name: 'x', flavor_name: 'f', count: '1' }, status: 200, answer: { status: true, instances: [{ id: 'one' }] } },
    ]);
    expect(problems.join('\n')).toMatch(/required property 'environment_name'/);
    expect(problems.join('\n')).toMatch(/body\/count must be integer/);
    expect(problems.join('\n')).toMatch(/body\/instances\/0\/id must be integer/);
  });
});

describe.runIf(!description.doc)('the Hyperstack fake against its description', () => {
  it.skip(`is not checked here: ${description.reason}`);
});
