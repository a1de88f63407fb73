import { expect, it } from 'vitest';
import { createVerdaProvider } from '../../../adapters/providers/verda/index.ts';
import { fastVerdaConfig } from '../../fakes/verda/adapter-config.ts';
import { VERDA_SERVED } from '../../fakes/verda/served-api.ts';
import { startFakeVerda } from '../../fakes/verda/server.ts';
import { descriptionSuites } from '../../support/description-suite.ts';
import type { RecordedExchange } from '../../support/provider-description.ts';
import { machineRequest } from '../provider-contract.ts';

/**
 * The Verda fake through a whole life (bearer, offers, keys, script, deploy, read, spot, volumes, delete), held to
 * the project's own description of what it serves (test/fakes/verda/served-api.ts) in every run, and to Verda's own
 * OpenAPI description where it is at hand (CI requires it): every request is one the description accepts, and
 * every answer the fake gives is one it describes. The fake cannot drift from the real API unseen.
 */
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDescribed a@b';
const shape = (e: RecordedExchange) => `${e.method} ${e.path.replace(/[0-9a-f-]{36}/g, '{id}')}`;

descriptionSuites({
  cloud: 'Verda',
  served: VERDA_SERVED,
  file: 'verda-openapi.json',
  // Cloudflare adds cf-connecting-ip on the way; errors are the {code, message} envelope the description states in prose
  publishedOptions: { headersAddedOnTheWay: ['cf-connecting-ip'], errorSchema: 'PublicApiErrorResponseDto' },
  life: async () => {
    const fake = await startFakeVerda();
    fake.state.bootMs = 0;
    try {
      const provider = createVerdaProvider(fastVerdaConfig(fake));
      expect((await provider.listOffers()).length).toBeGreaterThan(0);
      const volume = await provider.createVolume({ label: 'vol_desc1', name: 'data', sizeGb: 10, region: 'FIN-01' });
      const machine = await provider.createMachine(
        machineRequest({ offerId: '1H100.80S.30V@FIN-01', label: 'ins_desc1', name: 'described', sshPublicKeys: [KEY], startupScript: 'echo hi', volumeIds: [volume.volumeId] }),
      );
      expect((await provider.getMachine(machine.machineId))?.sshHost).not.toBeNull();
      await provider.listMachines();
      const spot = await provider.createSpotMachine({ ...machineRequest({ offerId: '1A100.80S.22V@FIN-01', label: 'ins_desc2', sshPublicKeys: [KEY] }), bidUsdPerHour: '1' });
      await provider.deleteVolume(volume.volumeId).catch(() => undefined); // refused: attached
      await provider.terminateMachine(machine.machineId);
      await provider.terminateMachine(spot.machineId);
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
    it('finds a request without its bearer, a deploy missing a field, and answers the adapter could not read', () => {
      const problems = checker
        .check([
          { method: 'GET', path: '/v1/instances/abc', query: {}, headers: {}, body: undefined, status: 200, answer: { id: 'abc', status: 'running' } },
          { method: 'POST', path: '/v1/instances', query: {}, headers: { authorization: 'Bearer x' }, body: { instance_type: '1H100.80S.30V', hostname: 'h', location_code: 'FIN-01' }, status: 400, answer: { message: 'no' } },
          { method: 'GET', path: '/v1/instance-availability', query: {}, headers: { authorization: 'Bearer x' }, body: undefined, status: 200, answer: [] },
        ])
        .join('\n');
      expect(problems).toMatch(/GET \/instances\/\{id\}: no credentials/);
      expect(problems).toMatch(/→ 200: body must have required property 'ip'/);
      expect(problems).toMatch(/body must have required property 'image'/);
      expect(problems).toMatch(/→ 400: error body must have required property 'code'/);
      expect(problems).toMatch(/the required query parameter is_spot is missing/);
    });
  },
  publishedCases: (checker) => {
    it('finds a request the description refuses, and an answer it does not describe', () => {
      const bad = checker.check([
        { method: 'POST', path: '/v1/instances', query: {}, headers: { authorization: 'Bearer x', 'user-agent': 'x' }, body: { instance_type: '1H100.80S.30V', hostname: 'h' }, status: 202, answer: 'id' },
        { method: 'GET', path: '/v1/instances/abc', query: {}, headers: {}, body: undefined, status: 200, answer: { id: 'abc' } },
        { method: 'POST', path: '/v1/nowhere', query: {}, headers: {}, body: undefined, status: 404, answer: undefined },
      ]);
      expect(bad.join('\n')).toMatch(/body must have required property 'image'/);
      expect(bad.join('\n')).toMatch(/no credentials/);
      expect(bad.join('\n')).toMatch(/GET \/v1\/instances\/\{instance_id\} → 200: body must have required property 'ip'/);
      expect(bad.join('\n')).toMatch(/POST \/v1\/nowhere: no such operation/);
    });
  },
});
