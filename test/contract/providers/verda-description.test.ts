import { describe, expect, it } from 'vitest';
import { createVerdaProvider } from '../../../adapters/providers/verda/index.ts';
import { fastVerdaConfig } from '../../fakes/verda/adapter-config.ts';
import { startFakeVerda } from '../../fakes/verda/server.ts';
import { DescriptionChecker, loadProviderDescription } from '../../support/provider-description.ts';
import { machineRequest } from '../provider-contract.ts';

/**
 * The Verda fake against Verda's own OpenAPI description: every request the adapter sends through a whole life
 * (bearer, offers, keys, script, deploy, read, spot, volumes, delete) is one the description accepts, and every
 * answer the fake gives is one it describes. The fake cannot drift from the real API unseen.
 */
const description = loadProviderDescription('verda-openapi.json');

describe.runIf(description.doc)('the Verda fake follows verda-openapi.json', () => {
  // Cloudflare adds cf-connecting-ip on the way; errors are the {code, message} envelope the description states in prose
  const checker = () => new DescriptionChecker(description.doc!, { headersAddedOnTheWay: ['cf-connecting-ip'], errorSchema: 'PublicApiErrorResponseDto' });

  it('accepts every request of a rental, a spot rental and a volume, and describes every answer', async () => {
    const fake = await startFakeVerda();
    fake.state.bootMs = 0;
    try {
      const provider = createVerdaProvider(fastVerdaConfig(fake));
      const offers = await provider.listOffers();
      expect(offers.length).toBeGreaterThan(0);
      const volume = await provider.createVolume({ label: 'vol_desc1', name: 'data', sizeGb: 10, region: 'FIN-01' });
      const machine = await provider.createMachine(
        machineRequest({ offerId: '1H100.80S.30V@FIN-01', label: 'ins_desc1', name: 'described', sshPublicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDescribed a@b'], startupScript: 'echo hi', volumeIds: [volume.volumeId] }),
      );
      expect((await provider.getMachine(machine.machineId))?.sshHost).not.toBeNull();
      await provider.listMachines();
      const spot = await provider.createSpotMachine({ ...machineRequest({ offerId: '1A100.80S.22V@FIN-01', label: 'ins_desc2', sshPublicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDescribed a@b'] }), bidUsdPerHour: '1' });
      await provider.deleteVolume(volume.volumeId).catch(() => undefined); // refused: attached
      await provider.terminateMachine(machine.machineId);
      await provider.terminateMachine(spot.machineId);
      await provider.terminateMachine(spot.machineId);
      await provider.deleteVolume(volume.volumeId);
      await provider.deleteVolume(volume.volumeId);
      expect(await provider.listVolumes()).toEqual([]);

      const exchanges = fake.state.exchanges;
      expect(new Set(exchanges.map((e) => `${e.method} ${e.path.replace(/[0-9a-f-]{36}/g, '{id}')}`))).toEqual(
        new Set([
          'POST /v1/oauth2/token', 'GET /v1/instance-types', 'GET /v1/instance-availability', 'GET /v1/locations', 'GET /v1/volume-types',
          'POST /v1/volumes', 'GET /v1/volumes/{id}', 'GET /v1/ssh-keys', 'POST /v1/ssh-keys', 'POST /v1/scripts', 'POST /v1/instances',
          'GET /v1/instances/{id}', 'GET /v1/instances', 'DELETE /v1/volumes/{id}', 'PUT /v1/instances', 'GET /v1/scripts/{id}',
          'DELETE /v1/scripts/{id}', 'GET /v1/volumes',
        ]),
      );
      expect(checker().check(exchanges)).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it('finds a request the description refuses, and an answer it does not describe', () => {
    const bad = checker().check([
      { method: 'POST', path: '/v1/instances', query: {}, headers: { authorization: 'Bearer x', 'user-agent': 'x' }, body: { instance_type: '1H100.80S.30V', hostname: 'h' }, status: 202, answer: 'id' },
      { method: 'GET', path: '/v1/instances/abc', query: {}, headers: {}, body: undefined, status: 200, answer: { id: 'abc' } },
      { method: 'POST', path: '/v1/nowhere', query: {}, headers: {}, body: undefined, status: 404, answer: undefined },
    ]);
    expect(bad.join('\n')).toMatch(/body must have required property 'image'/);
    expect(bad.join('\n')).toMatch(/no credentials/);
    expect(bad.join('\n')).toMatch(/GET \/v1\/instances\/\{instance_id\} → 200: body must have required property 'ip'/);
    expect(bad.join('\n')).toMatch(/POST \/v1\/nowhere: no such operation/);
  });
});

describe.runIf(!description.doc)('the Verda fake against its description', () => {
  it.skip(`is not checked here: ${description.reason}`);
});
