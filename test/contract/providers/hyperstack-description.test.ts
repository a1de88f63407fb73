import { expect, it } from 'vitest';
import { createHyperstackProvider } from '../../../adapters/providers/hyperstack/index.ts';
import { fastHyperstackConfig } from '../../fakes/hyperstack/adapter-config.ts';
import { HYPERSTACK_SERVED } from '../../fakes/hyperstack/served-api.ts';
import { startFakeHyperstack } from '../../fakes/hyperstack/server.ts';
import { descriptionSuites } from '../../support/description-suite.ts';
import type { RecordedExchange } from '../../support/provider-description.ts';
import { failureOf, machineRequest } from '../provider-contract.ts';

/**
 * The Hyperstack fake through a whole life (offers, environment, key pair, volume, create, read, reboot, a delete
 * refused while creating, delete), held to the project's own description of what it serves
 * (test/fakes/hyperstack/served-api.ts) in every run, and to Hyperstack's own OpenAPI description
 * (NexGenCloud/hyperstack-sdk-go api/openapi.yaml) where it is at hand (CI requires it): every request is one the
 * description accepts, and every answer one it describes.
 */
const shape = (e: RecordedExchange) => `${e.method} ${e.path.replace(/\/\d+/g, '/{id}')}`;

descriptionSuites({
  cloud: 'Hyperstack',
  served: HYPERSTACK_SERVED,
  file: 'hyperstack-openapi.json',
  life: async () => {
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
      return fake.state.exchanges;
    } finally {
      await fake.close();
    }
  },
  shape,
  ownCases: (checker) => {
    it('finds a request without its key, a create missing a field, and answers the adapter could not read', () => {
      const problems = checker
        .check([
          { method: 'GET', path: '/v1/core/regions', query: {}, headers: {}, body: undefined, status: 200, answer: { status: true, regions: [{ id: 1 }] } },
          { method: 'POST', path: '/v1/core/virtual-machines', query: {}, headers: { api_key: 'k' }, body: { name: 'x', flavor_name: 'f', image_name: 'i', key_name: 'k', count: '1' }, status: 400, answer: { error: 'no' } },
        ])
        .join('\n');
      expect(problems).toMatch(/GET \/core\/regions: no credentials/);
      expect(problems).toMatch(/body\/regions\/0 must have required property 'name'/);
      expect(problems).toMatch(/body must have required property 'environment_name'/);
      expect(problems).toMatch(/body\/count must be integer/);
      expect(problems).toMatch(/→ 400: error body must have required property 'message'/);
    });
  },
  publishedCases: (checker) => {
    it('finds a create the description refuses', () => {
      const problems = checker.check([
        { method: 'POST', path: '/v1/core/virtual-machines', query: {}, headers: { api_key: 'k' }, body: { name: 'x', flavor_name: 'f', count: '1' }, status: 200, answer: { status: true, instances: [{ id: 'one' }] } },
      ]);
      expect(problems.join('\n')).toMatch(/required property 'environment_name'/);
      expect(problems.join('\n')).toMatch(/body\/count must be integer/);
      expect(problems.join('\n')).toMatch(/body\/instances\/0\/id must be integer/);
    });
  },
});
