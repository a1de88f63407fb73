import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRebootable, isSelfRemoving, isVolumeHost, type CreateMachineRequest, type Provider, type ProviderFailure } from '../../../core/ports/providers.ts';
import { FaultyProvider } from '../../support/faulty-provider.ts';
import { createSandboxProvider, sandboxModule, type SandboxConfig } from '../../../adapters/providers/sandbox/index.ts';
import { MikroStorage } from '../../../adapters/storage/mikro-storage.ts';
import { freshDatabase, type TestDatabase } from '../../support/database.ts';
import { providerContract, failureOf, machineRequest, type ProviderHarness } from '../provider-contract.ts';
import { volumeHostContract } from '../volume-host-contract.ts';
import type { SandboxProvider } from '../../../adapters/providers/sandbox/adapter.ts';

/** The sandbox keeps its state in the control plane's database; standing alone, in memory. Both are held to one suite. */
let database: TestDatabase;
let storage: MikroStorage;
beforeAll(async () => {
  database = await freshDatabase();
  storage = await MikroStorage.open(database.target);
});
afterAll(async () => {
  await storage?.close();
  await database?.drop();
});

/** An empty simulated cloud in the test database, as a fresh account would have. */
const emptyCloud = async () => {
  await storage.execute('delete from sandbox_machines');
  await storage.execute('delete from sandbox_offers');
  await storage.execute('delete from sandbox_volumes');
  return storage;
};

/** The sandbox keeps every option on the machine, so the contract reads them straight from the simulated cloud. */
const harnessOf = (provider: SandboxProvider): ProviderHarness => ({
  provider,
  close: async () => {},
  echoed: async (machineId) => {
    const machine = (await provider.cloud.getMachine(machineId))!;
    const { options } = machine;
    return { image: machine.image, registryUsername: options.registryUsername, command: options.command, env: options.env,
      ports: options.ports, startupScript: options.startupScript, sshPublicKeys: options.sshPublicKeys, volumeIds: options.volumeIds };
  },
  volumeFor: async (offer) =>
    (await provider.createVolume({ label: 'vol_contract', name: 'contract', sizeGb: 10, region: offer.region! })).volumeId,
});

providerContract('sandbox', async () => harnessOf(createSandboxProvider({ seed: 7 }, await emptyCloud())));
providerContract('sandbox', async () => harnessOf(createSandboxProvider({ seed: 7 })));

/** A sandbox volume host whose machines attach volumes in us-east, from an offer there with capacity. */
const volumeHarness = async (provider: SandboxProvider) => {
  const offer = (await provider.listOffers()).find((o) => o.region === 'us-east' && o.available > 0)!;
  return {
    provider,
    region: 'us-east',
    priceUsdPerGbMonth: '0.0725',
    reportsInUse: true,
    attach: async (volumeId: string) =>
      (await provider.createMachine(machineRequest({ offerId: offer.id.slice(8), label: 'ins_attach1', volumeIds: [volumeId] }))).machineId,
    upstreamLabelOf: async (volumeId: string) => (await provider.cloud.getVolume(volumeId))?.label ?? null,
    close: async () => {},
  };
};
volumeHostContract('sandbox', async () => volumeHarness(createSandboxProvider({ seed: 7, volumePriceUsdPerGbMonth: '0.0725' }, await emptyCloud())));
volumeHostContract('sandbox', async () => volumeHarness(createSandboxProvider({ seed: 7, volumePriceUsdPerGbMonth: '0.0725' })));

/** A clock the test moves by hand, so provisioning and reboots need no sleeping. */
const manualClock = (start = Date.UTC(2026, 0, 1)) => {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
};

const request = (offerId: string, label = 'ins_test1'): CreateMachineRequest =>
  machineRequest({ offerId, label, sshPublicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAITestKey test@test'] });

/** A sandbox over a fresh state, which lives in `kind`: the test database (as in a control plane) or memory. */
const opener = (kind: 'database' | 'memory') => async (config: SandboxConfig = {}) => {
  const clock = manualClock();
  const provider = createSandboxProvider(
    { seed: 11, provisioningMs: 30_000, rebootMs: 5_000, clock: clock.now, ...config },
    kind === 'database' ? await emptyCloud() : undefined,
  );
  return { provider, cloud: provider.cloud, clock };
};

/** The id, without "sandbox:", of an offer that rents as one single machine. */
const singleMachineOffer = async (provider: ReturnType<typeof createSandboxProvider>) => {
  const offer = (await provider.listOffers()).find((o) => o.available === 1)!;
  return offer.id.slice('sandbox:'.length);
};

describe('sandbox provider: capabilities', () => {
  it('can reboot, cannot remove machines by itself, and declares its extra filter keys', () => {
    const provider = createSandboxProvider();
    expect(isRebootable(provider)).toBe(true);
    expect(isSelfRemoving(provider)).toBe(false);
    expect(provider.extraFilterKeys).toEqual(
      expect.arrayContaining(['reliability', 'cuda', 'datacenter', 'form_factor', 'host_id', 'static_ip', 'rocm']),
    );
  });

  it('carries out every create option and hosts volumes', () => {
    const provider = createSandboxProvider();
    expect(provider.machineOptions).toEqual(['custom_image', 'registry_auth', 'command', 'env', 'ports', 'startup_script', 'ssh_keys', 'volumes']);
    expect(isVolumeHost(provider)).toBe(true);
    // the tests' misbehaving wrapper passes both through, and hosts volumes only over a provider that does
    const wrapped = new FaultyProvider(provider);
    expect(wrapped.machineOptions).toBe(provider.machineOptions);
    expect(isVolumeHost(wrapped)).toBe(true);
    const plain: Provider = {
      name: 'plain', machineOptions: [], extraFilterKeys: [], listOffers: async () => [], isOfferId: () => false, getOffer: async () => null,
      createMachine: async () => { throw new Error('not used'); }, getMachine: async () => null, listMachines: async () => [], terminateMachine: async () => undefined,
    };
    expect(isVolumeHost(new FaultyProvider(plain))).toBe(false);
  });

  it('takes its volume price from SANDBOX_VOLUME_USD_PER_GB_MONTH, and refuses one that is not a decimal', async () => {
    expect(sandboxModule.fromEnv({})).not.toHaveProperty('volumePriceUsdPerGbMonth');
    expect((await createSandboxProvider().volumeOffers())[0]!.priceUsdPerGbMonth).toBe('0.07');
    expect(sandboxModule.fromEnv({ SANDBOX_VOLUME_USD_PER_GB_MONTH: '0.115' })).toMatchObject({ volumePriceUsdPerGbMonth: '0.115' });
    for (const bad of ['-1', '1e-2', '0.1234567', 'free']) {
      expect(() => sandboxModule.fromEnv({ SANDBOX_VOLUME_USD_PER_GB_MONTH: bad })).toThrow(/^SANDBOX_VOLUME_USD_PER_GB_MONTH: /);
    }
    expect(() => createSandboxProvider({ volumePriceUsdPerGbMonth: '7 cents' })).toThrow(/volumePriceUsdPerGbMonth/);
    const offers = await createSandboxProvider({ volumePriceUsdPerGbMonth: '0.115' }).volumeOffers();
    expect(offers.map((o) => o.region)).toEqual(['us-east', 'us-central', 'us-west', 'ca-central', 'sa-east', 'eu-west', 'eu-central', 'eu-north', 'eu-south', 'ap-northeast', 'ap-east', 'ap-southeast', 'ap-south']);
    expect(new Set(offers.map((o) => o.priceUsdPerGbMonth))).toEqual(new Set(['0.115']));
  });

  it('rejects nonsense configuration with a clear message', () => {
    expect(() => createSandboxProvider({ offers: 0 })).toThrow(/offers/);
    expect(() => createSandboxProvider({ offers: 2.5 })).toThrow(/offers/);
    expect(() => createSandboxProvider({ failureRate: 1.5 })).toThrow(/failureRate/);
    expect(() => createSandboxProvider({ latencyMs: -1 })).toThrow(/latencyMs/);
    expect(() => createSandboxProvider({ seed: -3 })).toThrow(/seed/);
  });
});

describe.each(['database', 'memory'] as const)('sandbox with its state in %s', (kind) => {
  const open = opener(kind);

  describe('sandbox provider: machine lifecycle on an injected clock', () => {
    it('provisions, runs after provisioningMs, reboots and comes back, then terminates', async () => {
      const { provider, clock } = await open();
      const offerId = await singleMachineOffer(provider);
      const offer = (await provider.getOffer(offerId))!;

      const created = await provider.createMachine(request(offerId, 'ins_life1'));
      expect(created).toMatchObject({ label: 'ins_life1', status: 'provisioning', sshHost: null, sshPort: null });
      expect(created.priceUsdPerHour).toBe(offer.priceUsdPerHour);

      clock.advance(29_999);
      expect((await provider.getMachine(created.machineId))?.status).toBe('provisioning');
      clock.advance(1);
      const running = (await provider.getMachine(created.machineId))!;
      expect(running.status).toBe('running');
      // documentation addresses only (RFC 5737): a demo can never reach a real host
      expect(running.sshHost).toMatch(/^(192\.0\.2|198\.51\.100|203\.0\.113)\.\d{1,3}$/);
      expect(running.sshPort).toBeGreaterThanOrEqual(10_000);
      expect(running.sshPort).toBeLessThan(60_000);

      await provider.rebootMachine(created.machineId);
      expect((await provider.getMachine(created.machineId))).toMatchObject({ status: 'rebooting', sshHost: null });
      clock.advance(5_000);
      expect((await provider.getMachine(created.machineId))?.status).toBe('running');

      await provider.terminateMachine(created.machineId);
      expect((await provider.getMachine(created.machineId))?.status).toBe('terminated');
      expect((await provider.listMachines()).map((m) => m.machineId)).not.toContain(created.machineId);
      clock.advance(3_600_000);
      expect(await provider.getMachine(created.machineId)).toBeNull();
    });

    it('refuses to reboot a machine that is still provisioning, terminated or unknown', async () => {
      const { provider } = await open();
      const machine = await provider.createMachine(request(await singleMachineOffer(provider)));
      expect((await failureOf(provider.rebootMachine(machine.machineId))).kind).toBe('rejected');
      await provider.terminateMachine(machine.machineId);
      expect((await failureOf(provider.rebootMachine(machine.machineId))).kind).toBe('rejected');
      expect((await failureOf(provider.rebootMachine('999999999'))).kind).toBe('rejected');
    });

    it('can make machines fail or hang in provisioning, for timeout handling', async () => {
      const { provider, cloud, clock } = await open();
      cloud.mishapNextProvisions(1, 'failed');
      cloud.mishapNextProvisions(1, 'stuck');
      const offers = (await provider.listOffers()).filter((o) => o.available === 1);
      const failed = await provider.createMachine(request(offers[0]!.id.slice(8), 'ins_fail'));
      const stuck = await provider.createMachine(request(offers[1]!.id.slice(8), 'ins_stuck'));
      clock.advance(10 * 3_600_000);
      expect((await provider.getMachine(failed.machineId))?.status).toBe('failed');
      expect((await provider.getMachine(stuck.machineId))?.status).toBe('provisioning');
    });

    it('runs at once with provisioningMs 0 and the real clock by default', async () => {
      const provider = createSandboxProvider({ provisioningMs: 0 }, kind === 'database' ? await emptyCloud() : undefined);
      const machine = await provider.createMachine(request(await singleMachineOffer(provider)));
      expect(machine.status).toBe('running');
    });

    it('lists only machines carrying one of our labels, with the label read back', async () => {
      const { provider, cloud } = await open();
      const ours = await provider.createMachine(request(await singleMachineOffer(provider), 'ins_mine'));
      await cloud.addForeignMachine(null);
      await cloud.addForeignMachine('someone-elses-box');
      const listed = await provider.listMachines();
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({ machineId: ours.machineId, label: 'ins_mine' });
    });

    it('forgets a machine lost upstream and frees its offer', async () => {
      const { provider, cloud } = await open();
      const offerId = await singleMachineOffer(provider);
      const machine = await provider.createMachine(request(offerId));
      await cloud.loseMachine(machine.machineId);
      expect(await provider.getMachine(machine.machineId)).toBeNull();
      expect((await provider.getOffer(offerId))?.available).toBe(1);
      await provider.terminateMachine(machine.machineId); // already gone: still fine
    });
  });

  describe('sandbox provider: create options and volumes', () => {
    /** A machine in `region` from an offer with capacity there. */
    const offerIn = async (provider: SandboxProvider, region: string) =>
      (await provider.listOffers()).find((o) => o.region === region && o.available > 0)!.id.slice(8);

    it('keeps every option exactly as asked, the registry password only as its SHA-256 digest', async () => {
      const { provider, cloud } = await open();
      const offerId = await offerIn(provider, 'eu-west');
      const volume = await provider.createVolume({ label: 'vol_keep1', name: 'data', sizeGb: 50, region: 'eu-west' });
      const machine = await provider.createMachine(
        machineRequest({
          offerId,
          label: 'ins_opts1',
          image: 'registry.example.com/team/trainer:7',
          registryAuth: { username: 'robot$ci', password: 'pa ss' },
          command: 'python -m train',
          env: { EPOCHS: '3', EMPTY: '' },
          ports: [8888, 8888, 22],
          startupScript: '#!/bin/sh\necho hi\n',
          sshPublicKeys: ['ssh-ed25519 AAAAfirst a@b', ' ssh-rsa AAAAsecond c@d '],
          volumeIds: [volume.volumeId],
        }),
      );
      const kept = (await cloud.getMachine(machine.machineId))!;
      expect(kept.image).toBe('registry.example.com/team/trainer:7');
      expect(kept.options).toEqual({
        sshPublicKeys: ['ssh-ed25519 AAAAfirst a@b', 'ssh-rsa AAAAsecond c@d'],
        registryUsername: 'robot$ci',
        registryPasswordSha256: createHash('sha256').update('pa ss').digest('hex'),
        command: 'python -m train',
        env: { EPOCHS: '3', EMPTY: '' },
        ports: [8888, 22],
        startupScript: '#!/bin/sh\necho hi\n',
        volumeIds: [volume.volumeId],
      });
      expect((await provider.getVolume(volume.volumeId))?.status).toBe('in_use');
    });

    it('a machine made without options keeps none', async () => {
      const { provider, cloud } = await open();
      const machine = await provider.createMachine(machineRequest({ offerId: await singleMachineOffer(provider), label: 'ins_bare' }));
      const kept = (await cloud.getMachine(machine.machineId))!;
      expect(kept.image).toBe('nvidia/cuda:12.8.1-runtime-ubuntu24.04');
      expect(kept.options).toMatchObject({ sshPublicKeys: [], registryUsername: null, env: {}, ports: [], volumeIds: [] });
    });

    it('refuses options it cannot run, and volumes that are missing or in another region, making nothing', async () => {
      const { provider } = await open();
      const offerId = await offerIn(provider, 'us-west');
      const elsewhere = await provider.createVolume({ label: 'vol_far', name: 'far', sizeGb: 10, region: 'eu-north' });
      const cases: [Partial<CreateMachineRequest>, RegExp][] = [
        [{ env: { 'NOT-A-NAME': 'x' } }, /environment variable name/],
        [{ ports: [0] }, /port 0/],
        [{ ports: [70_000] }, /port 70000/],
        [{ image: 'two words' }, /image/],
        [{ sshPublicKeys: ['ssh-ed25519 AAAA\nrm -rf /'] }, /one non-empty line/],
        [{ registryAuth: { username: '', password: 'x' } }, /username and a password/],
        [{ volumeIds: ['sbv-missing'] }, /volume sbv-missing does not exist/],
        [{ volumeIds: [elsewhere.volumeId] }, /is in eu-north, the offer in us-west/],
      ];
      for (const [fields, reason] of cases) {
        const failure = await failureOf(provider.createMachine(machineRequest({ offerId, label: 'ins_refused', ...fields })));
        expect(failure.kind).toBe('rejected');
        expect(failure.message).toMatch(reason);
      }
      expect(await provider.listMachines()).toEqual([]);
      expect((await provider.getOffer(offerId))?.available).toBeGreaterThan(0);
    });

    it('makes volumes only in its regions, from 1 to 10000 GB, and frees a volume once its machine is terminated', async () => {
      const { provider } = await open();
      for (const sizeGb of [0, 10_001, 2.5]) {
        expect((await failureOf(provider.createVolume({ label: 'vol_bad', name: 'x', sizeGb, region: 'us-east' }))).message).toMatch(/1 to 10000/);
      }
      const volume = await provider.createVolume({ label: 'vol_life', name: 'life', sizeGb: 10_000, region: 'ap-south' });
      expect(volume).toEqual({ volumeId: volume.volumeId, label: 'vol_life', region: 'ap-south', sizeGb: 10_000, status: 'available' });
      const machine = await provider.createMachine(
        machineRequest({ offerId: await offerIn(provider, 'ap-south'), label: 'ins_vol', volumeIds: [volume.volumeId] }),
      );
      await provider.terminateMachine(machine.machineId);
      expect((await provider.getVolume(volume.volumeId))?.status).toBe('available');
      await provider.deleteVolume(volume.volumeId);
      expect(await provider.getVolume(volume.volumeId)).toBeNull();
    });
  });

  describe('sandbox provider: capacity', () => {
    it('takes a single-machine offer off the market until the machine is terminated', async () => {
      const { provider } = await open();
      const offerId = await singleMachineOffer(provider);
      const machine = await provider.createMachine(request(offerId));
      expect((await provider.getOffer(offerId))?.available).toBe(0);
      expect((await provider.listOffers()).find((o) => o.id === `sandbox:${offerId}`)?.available).toBe(0);

      const second = await failureOf(provider.createMachine(request(offerId, 'ins_second')));
      expect(second.kind).toBe('rejected');
      expect(second.message).toMatch(/capacity/);

      await provider.terminateMachine(machine.machineId);
      expect((await provider.getOffer(offerId))?.available).toBe(1);
      await provider.createMachine(request(offerId, 'ins_third'));
    });

    it('counts down a pool offer one machine at a time', async () => {
      const { provider } = await open();
      const pool = (await provider.listOffers()).find((o) => o.available >= 3)!;
      const offerId = pool.id.slice(8);
      await provider.createMachine(request(offerId, 'ins_pool1'));
      await provider.createMachine(request(offerId, 'ins_pool2'));
      expect((await provider.getOffer(offerId))?.available).toBe(pool.available - 2);
    });
  });

  describe('sandbox provider: injected trouble', () => {
    it('makes listings wait latencyMs, and gives up as unavailable when the caller aborts', async () => {
      const { provider, cloud } = await open({ latencyMs: 60 });
      const started = performance.now();
      expect((await provider.listOffers()).length).toBe(300);
      expect(performance.now() - started).toBeGreaterThanOrEqual(55);

      cloud.latencyMs = 5_000;
      const abortedAt = performance.now();
      const failure = await failureOf(provider.listOffers(AbortSignal.timeout(30)));
      expect(failure.kind).toBe('unavailable');
      expect(performance.now() - abortedAt).toBeLessThan(2_000);
    });

    it('fails the next creates as rejected (nothing made) or ambiguous (the machine exists)', async () => {
      const { provider, cloud } = await open();
      const offers = (await provider.listOffers()).filter((o) => o.available === 1);
      const [a, b] = [offers[0]!.id.slice(8), offers[1]!.id.slice(8)];

      cloud.failNextCreates(2, 'rejected');
      expect((await failureOf(provider.createMachine(request(a, 'ins_r1')))).kind).toBe('rejected');
      expect((await failureOf(provider.createMachine(request(a, 'ins_r2')))).kind).toBe('rejected');
      expect(await provider.listMachines()).toEqual([]);
      expect((await provider.getOffer(a))?.available).toBe(1);

      cloud.failNextCreates(1, 'ambiguous');
      expect((await failureOf(provider.createMachine(request(b, 'ins_lost')))).kind).toBe('ambiguous');
      const found = await provider.listMachines();
      expect(found.map((m) => m.label)).toEqual(['ins_lost']);
      expect((await provider.getOffer(b))?.available).toBe(0);

      // the knobs are used up: the next create goes through
      expect((await provider.createMachine(request(a, 'ins_ok'))).label).toBe('ins_ok');
    });

    it('declines a share of creates from failureRate, the same way for the same seed', async () => {
      const outcomes = async () => {
        const { provider } = await open({ failureRate: 0.5, seed: 5 });
        const offers = (await provider.listOffers()).filter((o) => o.available === 1).slice(0, 40);
        const result: string[] = [];
        for (const offer of offers) {
          result.push(
            await provider.createMachine(request(offer.id.slice(8))).then(
              () => 'ok',
              (error: ProviderFailure) => error.kind,
            ),
          );
        }
        return result;
      };
      const first = await outcomes();
      expect(await outcomes()).toEqual(first);
      expect(first.filter((o) => o === 'rejected').length).toBeGreaterThan(5);
      expect(first.filter((o) => o === 'ok').length).toBeGreaterThan(5);
      expect(new Set(first)).toEqual(new Set(['ok', 'rejected']));

      const { provider } = await open({ failureRate: 1 });
      expect((await failureOf(provider.createMachine(request(await singleMachineOffer(provider))))).kind).toBe('rejected');
    });

    it('withdraws an offer: gone from the listing, null when checked live, rejected on create', async () => {
      const { provider, cloud } = await open();
      const offerId = await singleMachineOffer(provider);
      await cloud.withdrawOffer(offerId);
      expect(await provider.getOffer(offerId)).toBeNull();
      expect(await provider.getOffer(`0${offerId}`)).toBeNull(); // no second spelling that slips past
      expect((await provider.listOffers()).some((o) => o.id === `sandbox:${offerId}`)).toBe(false);
      expect((await provider.listOffers()).length).toBe(299);
      expect((await failureOf(provider.createMachine(request(offerId)))).kind).toBe('rejected');
      await cloud.restoreOffer(offerId);
      expect((await provider.getOffer(offerId))?.id).toBe(`sandbox:${offerId}`);
    });

    it('changes an offer price between the listing and the live check', async () => {
      const { provider, cloud } = await open();
      const offerId = await singleMachineOffer(provider);
      await cloud.repriceOffer(offerId, '12.5');
      expect((await provider.getOffer(offerId))?.priceUsdPerHour).toBe('12.50');
      await cloud.repriceOffer(offerId, '9.8765');
      expect((await provider.getOffer(offerId))?.priceUsdPerHour).toBe('9.8765');
      const machine = await provider.createMachine(request(offerId));
      expect(machine.priceUsdPerHour).toBe('9.8765');
      await expect(cloud.repriceOffer(offerId, '1.23456')).rejects.toThrow(RangeError);
      await expect(cloud.repriceOffer(offerId, '1e3')).rejects.toThrow(RangeError);
    });

    it('fails the next reads as unavailable, then answers again', async () => {
      const { provider, cloud } = await open();
      cloud.failNextReads(3);
      expect((await failureOf(provider.listOffers())).kind).toBe('unavailable');
      expect((await failureOf(provider.getOffer('100001'))).kind).toBe('unavailable');
      expect((await failureOf(provider.listMachines())).kind).toBe('unavailable');
      expect((await provider.listOffers()).length).toBe(300);
    });
  });
});

describe('sandbox state in the database: one cloud for every process, across restarts', () => {
  /** Two sandboxes on one database, as two processes (replicas, the sweep daemon) would hold them. */
  const twoProcesses = async () => {
    const clock = manualClock();
    const config = { seed: 11, provisioningMs: 30_000, clock: clock.now };
    const db = await emptyCloud();
    return { a: createSandboxProvider(config, db), b: createSandboxProvider(config, db), clock };
  };

  it('a machine made by one is read, listed, rebooted and terminated by the other', async () => {
    const { a, b, clock } = await twoProcesses();
    const machine = await a.createMachine(request(await singleMachineOffer(a), 'ins_shared1'));
    clock.advance(30_000);
    expect(await b.getMachine(machine.machineId)).toMatchObject({ label: 'ins_shared1', status: 'running' });
    expect((await b.listMachines()).map((m) => m.machineId)).toEqual([machine.machineId]);
    await b.rebootMachine(machine.machineId);
    expect((await a.getMachine(machine.machineId))?.status).toBe('rebooting');
    await b.terminateMachine(machine.machineId);
    expect((await a.getMachine(machine.machineId))?.status).toBe('terminated');
    expect(await a.listMachines()).toEqual([]);
  });

  it('a later sandbox on the same database (a restart) continues the machines and the market as they were', async () => {
    const { a, clock } = await twoProcesses();
    const offerId = await singleMachineOffer(a);
    const machine = await a.createMachine(request(offerId, 'ins_restart1'));
    const withdrawn = (await a.listOffers()).find((o) => o.available === 1 && o.id !== `sandbox:${offerId}`)!.id.slice(8);
    await a.cloud.withdrawOffer(withdrawn);
    await a.cloud.repriceOffer('100001', '3.21');

    clock.advance(60_000);
    const restarted = createSandboxProvider({ seed: 11, provisioningMs: 30_000, clock: clock.now }, storage);
    expect(await restarted.getMachine(machine.machineId)).toMatchObject({ status: 'running', label: 'ins_restart1' });
    expect((await restarted.getOffer(offerId))?.available).toBe(0);
    expect(await restarted.getOffer(withdrawn)).toBeNull();
    expect((await restarted.getOffer('100001'))?.priceUsdPerHour).toBe('3.21');
    const again = await restarted.createMachine(request(await singleMachineOffer(restarted), 'ins_restart2'));
    expect(again.machineId).not.toBe(machine.machineId);
  });

  it('hands out machine ids once, whichever process asks', async () => {
    const { a, b } = await twoProcesses();
    const offers = (await a.listOffers()).filter((o) => o.available === 1).slice(0, 12).map((o) => o.id.slice(8));
    const made = await Promise.all(offers.map((offerId, i) => (i % 2 ? a : b).createMachine(request(offerId, `ins_ids${i}`))));
    expect(new Set(made.map((m) => m.machineId)).size).toBe(12);
    expect((await a.listMachines()).map((m) => m.label)).toHaveLength(12);
  });

  it('lets only one of two processes take the last unit of an offer', async () => {
    const { a, b } = await twoProcesses();
    const offerId = await singleMachineOffer(a);
    const outcomes = await Promise.allSettled([a.createMachine(request(offerId, 'ins_race1')), b.createMachine(request(offerId, 'ins_race2'))]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect((lost.reason as ProviderFailure).kind).toBe('rejected');
    expect(await b.listMachines()).toHaveLength(1);
    expect((await a.getOffer(offerId))?.available).toBe(0);
  });
});
