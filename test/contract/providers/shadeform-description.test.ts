import { describe, expect, it } from 'vitest';
import { providerNamed } from '../../../adapters/providers/registry.ts';
import { createShadeformProvider } from '../../../adapters/providers/shadeform/index.ts';
import { fastShadeformConfig } from '../../fakes/shadeform/adapter-config.ts';
import { startFakeShadeform } from '../../fakes/shadeform/server.ts';
import { DescriptionChecker, loadProviderDescription } from '../../support/provider-description.ts';
import { machineRequest } from '../provider-contract.ts';

/**
 * The Shadeform fake against Shadeform's published OpenAPI file. That file has only instance types, create, info,
 * list and delete: every exchange of those is one it accepts and describes, the spot create and a create with a
 * volume included. What it lacks (restart, SSH keys, volumes) comes from Shadeform's API reference and is named
 * here, so a new call outside the file cannot slip in unseen. The newer statuses (`deleting`, `status_details`) are
 * the reference's too: this life does not read a machine after its delete.
 */
const description = loadProviderDescription('shadeform-openapi.json');

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

describe.runIf(description.doc)('the Shadeform fake follows shadeform-openapi.json', () => {
  it('accepts every request of a rental, a spot rental and a volume that the file has, describes every answer, and uses nothing else but the reference calls named here', async () => {
    const fake = await startFakeShadeform();
    fake.state.bootMs = 0;
    fake.state.deleteMs = 0;
    try {
      const provider = createShadeformProvider(fastShadeformConfig(fake), { enabledProviders: ['lambda'], providerNamed });
      expect((await provider.listOffers()).length).toBeGreaterThan(0);
      const volume = await provider.createVolume({ label: 'vol_desc1', name: 'data', sizeGb: 10, region: 'us-central-1' });
      const machine = await provider.createMachine(
        machineRequest({ offerId: 'massedcompute:A6000@us-central-1', label: 'ins_desc1', sshPublicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDescribed a@b', 'ssh-rsa AAAAB3Second b@c'], startupScript: 'echo hi', volumeIds: [volume.volumeId] }),
      );
      expect(await provider.getMachine(machine.machineId)).toMatchObject({ sshUser: 'shadeform', sshPort: 2222 });
      const spot = await provider.createSpotMachine({ ...machineRequest({ offerId: 'datacrunch:H100@FIN-01', label: 'ins_desc2', sshPublicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDescribed a@b'] }), bidUsdPerHour: '1' });
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

      const checker = new DescriptionChecker(description.doc!);
      const inFile = fake.state.exchanges.filter((e) => checker.operationOf(e.method, e.path));
      const outside = fake.state.exchanges.filter((e) => !checker.operationOf(e.method, e.path)).map((e) => `${e.method} ${e.path.replace(/[0-9a-f-]{36}/g, '{id}')}`);
      expect(new Set(outside)).toEqual(new Set(OUTSIDE_THE_FILE));
      expect(new Set(inFile.map((e) => `${e.method} ${e.path.replace(/[0-9a-f-]{36}/g, '{id}')}`))).toEqual(
        new Set(['GET /v1/instances/types', 'POST /v1/instances/create', 'GET /v1/instances/{id}/info', 'GET /v1/instances', 'POST /v1/instances/{id}/delete']),
      );
      expect(checker.check(inFile)).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it('finds a create the file refuses, and a cloud it does not know', () => {
    const problems = new DescriptionChecker(description.doc!).check([
      { method: 'POST', path: '/v1/instances/create', query: {}, headers: {}, body: { cloud: 'nowhere', region: 'r', shade_instance_type: 'A6000', name: 'x' }, status: 200, answer: { id: 'not-a-uuid' } },
    ]);
    expect(problems.join('\n')).toMatch(/required property 'shade_cloud'/);
    expect(problems.join('\n')).toMatch(/body\/cloud must be equal to one of the allowed values/);
    expect(problems.join('\n')).toMatch(/no credentials/);
  });
});

describe.runIf(!description.doc)('the Shadeform fake against its description', () => {
  it.skip(`is not checked here: ${description.reason}`);
});
