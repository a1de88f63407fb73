import { expect, it } from 'vitest';
import { providerNamed } from '../../../adapters/providers/registry.ts';
import { createShadeformProvider } from '../../../adapters/providers/shadeform/index.ts';
import { fastShadeformConfig } from '../../fakes/shadeform/adapter-config.ts';
import { SHADEFORM_SERVED } from '../../fakes/shadeform/served-api.ts';
import { startFakeShadeform } from '../../fakes/shadeform/server.ts';
import { descriptionSuites } from '../../support/description-suite.ts';
import type { RecordedExchange } from '../../support/provider-description.ts';
import { machineRequest } from '../provider-contract.ts';

/**
 * The Shadeform fake through a whole life (a rental with a volume, a spot rental, restart, deletes), held to the
 * project's own description of what it serves (test/fakes/shadeform/served-api.ts) in every run, and to
 * Shadeform's published OpenAPI file where that file is at hand (CI requires it). That file has only instance
 * types, create, info, list and delete: every exchange of those is one it accepts and describes, the spot create
 * and a create with a volume included. What it lacks (restart, SSH keys, volumes) comes from Shadeform's API
 * reference and is named here, so a new call outside the file cannot slip in unseen. The newer statuses
 * (`deleting`, `status_details`) are the reference's too: this life does not read a machine after its delete.
 */
const OUTSIDE_THE_FILE = [
  'GET /v1/sshkeys',
  'POST /v1/sshkeys/add',
  'POST /v1/instances/{id}/restart',
  'GET /v1/volumes/types',
  'POST /v1/volumes/create',
  'GET /v1/volumes/{id}/info',
  'GET /v1/volumes',
  'POST /v1/volumes/{id}/delete',
];

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDescribed a@b';
const shape = (e: RecordedExchange) => `${e.method} ${e.path.replace(/[0-9a-f-]{36}/g, '{id}')}`;

descriptionSuites({
  cloud: 'Shadeform',
  served: SHADEFORM_SERVED,
  file: 'shadeform-openapi.json',
  outsideTheFile: OUTSIDE_THE_FILE,
  life: async () => {
    const fake = await startFakeShadeform();
    fake.state.bootMs = 0;
    fake.state.deleteMs = 0;
    try {
      const provider = createShadeformProvider(fastShadeformConfig(fake), { enabledProviders: ['lambda'], providerNamed });
      expect((await provider.listOffers()).length).toBeGreaterThan(0);
      const volume = await provider.createVolume({ label: 'vol_desc1', name: 'data', sizeGb: 10, region: 'us-central-1' });
      const machine = await provider.createMachine(
        machineRequest({ offerId: 'massedcompute:A6000@us-central-1', label: 'ins_desc1', sshPublicKeys: [KEY, 'ssh-rsa AAAAB3Second b@c'], startupScript: 'echo hi', volumeIds: [volume.volumeId] }),
      );
      expect(await provider.getMachine(machine.machineId)).toMatchObject({ sshUser: 'shadeform', sshPort: 2222 });
      const spot = await provider.createSpotMachine({ ...machineRequest({ offerId: 'datacrunch:H100@FIN-01', label: 'ins_desc2', sshPublicKeys: [KEY] }), bidUsdPerHour: '1' });
      await provider.listMachines();
      await provider.rebootMachine(machine.machineId);
      expect((await provider.getVolume(volume.volumeId))?.status).toBe('in_use');
      await provider.deleteVolume(volume.volumeId).catch(() => undefined); // refused: mounted
      await provider.terminateMachine(machine.machineId);
      await provider.terminateMachine(machine.machineId);
      await provider.terminateMachine(spot.machineId);
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
    it('finds a request without its key, a create missing a field or mounting two volumes, and answers the adapter could not read', () => {
      const problems = checker
        .check([
          { method: 'GET', path: '/v1/volumes', query: {}, headers: {}, body: undefined, status: 200, answer: { volumes: [{ id: 'v', cloud: 'c', region: 'r', name: 'n', size_in_gb: '10', mounted_by: '' }] } },
          { method: 'POST', path: '/v1/instances/create', query: {}, headers: { 'x-api-key': 'k' }, body: { cloud: 'c', region: 'r', shade_instance_type: 't', name: 'n', volume_ids: ['a', 'b'] }, status: 500, answer: { error: 'boom' } },
          { method: 'POST', path: '/v1/instances/x/stop', query: {}, headers: { 'x-api-key': 'k' }, body: undefined, status: 404, answer: undefined },
        ])
        .join('\n');
      expect(problems).toMatch(/GET \/volumes: no credentials/);
      expect(problems).toMatch(/size_in_gb must be integer/);
      expect(problems).toMatch(/body must have required property 'shade_cloud'/);
      expect(problems).toMatch(/body\/volume_ids must NOT have more than 1 items/);
      expect(problems).toMatch(/→ 500: error body must have required property 'message'/);
      expect(problems).toMatch(/POST \/v1\/instances\/x\/stop: no such operation/);
    });
  },
  publishedCases: (checker) => {
    it('finds a create the file refuses, and a cloud it does not know', () => {
      const problems = checker.check([
        { method: 'POST', path: '/v1/instances/create', query: {}, headers: {}, body: { cloud: 'nowhere', region: 'r', shade_instance_type: 'A6000', name: 'x' }, status: 200, answer: { id: 'not-a-uuid' } },
      ]);
      expect(problems.join('\n')).toMatch(/required property 'shade_cloud'/);
      expect(problems.join('\n')).toMatch(/body\/cloud must be equal to one of the allowed values/);
      expect(problems.join('\n')).toMatch(/no credentials/);
    });
  },
});
