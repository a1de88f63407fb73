import { ON_DEMAND_MINIMUM_MINUTES, SPOT_MINIMUM_MINUTES } from '../billing/charges.ts';
import { postEntry } from '../billing/ledger.ts';
import { notFound } from '../errors.ts';
import type { Quote } from '../market/node-chooser.ts';
import type { Cents } from '../money.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import { usableQuote, type RentalFigures } from '../quotes/quote.ts';
import { firstRecovery, recoveryView } from '../recovery/recovery.ts';
import { admitSpend, type Admitted } from '../spending/spend-gate.ts';
import { remainingCents, type Token } from '../tenancy/token.ts';
import { HOUR_MS, type RentalsContext } from './context.ts';
import { INSTANCE_ID_PREFIX, ledgerDescription, type Instance } from './instance.ts';
import type { Adoption, Rented, RentRequest } from './rent-request.ts';
import type { ResolvedOptions } from './rental-options.ts';

/** What a replacement asks again: the rental's options as sent (a template's and a saved image's read anew then). */
const recoveryOptionsOf = (r: RentRequest) => ({
  sshPublicKey: r.sshPublicKey,
  sshKeyId: r.sshKeyId,
  imageId: r.imageId,
  templateId: r.templateId,
  env: r.env,
  ports: r.ports,
  startupScript: r.startupScript,
});

/** A rental as committed: the instance, or the one an earlier request with the key made; the volumes to attach upstream. */
export type Committed = Rented & { upstreamVolumeIds?: string[] };

/** A rental priced: its node's live quote, the rate it is rented at, the request's digest and options. */
export interface Priced {
  quote: Quote;
  rate: Cents;
  digest: string;
  options: ResolvedOptions;
  /** The quote it rents by: marked used in the rental's transaction, where a second use finds it used (409). */
  quoteId?: string;
}

/**
 * The rental's one transaction, before any provider is called: the account locked (a second request with the key
 * sees the first here), the spend gate (token chain, pause, funds for the first hour, the cap commitment), the
 * volumes checked, the instance added (and adopted by its booking, or its quote marked used), the first hour charged.
 */
export function commitRental(ctx: RentalsContext, caller: Token, request: RentRequest, priced: Priced, adoption?: Adoption): Promise<Committed> {
  return ctx.storage.transaction(async (uow) => (await commitIn(ctx, uow, caller, request, priced, adoption)).committed);
}

/** Thrown to roll a rehearsal back with what it found. */
class Rehearsed {
  readonly figures: RentalFigures;
  constructor(figures: RentalFigures) {
    this.figures = figures;
  }
}

/**
 * The rental's transaction run in full and rolled back (docs/decisions.md, "Rent by specification and quotes"): a
 * dry run or a quote passes the very checks a rental passes (the spend gate, volumes, a quote's use) and answers
 * what the rental would charge now, commit and leave of the cap, changing nothing. The key is left out: a rehearsal
 * neither replays nor takes it.
 */
export async function rehearseRental(ctx: RentalsContext, caller: Token, request: RentRequest, priced: Priced): Promise<RentalFigures> {
  try {
    await ctx.storage.transaction(async (uow) => {
      const { committed, admitted } = await commitIn(ctx, uow, caller, { ...request, idempotencyKey: null }, priced);
      const { instance } = committed;
      const left = remainingCents(admitted!.chain);
      throw new Rehearsed({
        nodeId: instance.nodeId,
        rateCentsPerHour: instance.rateCentsPerHour,
        perGpuCents: priced.quote.perGpuCents,
        chargedNowCents: instance.chargedCents,
        commitmentCents: instance.commitmentCents,
        capRemainingAfterCents: left === null ? null : left - instance.commitmentCents,
      });
    });
  } catch (error) {
    if (error instanceof Rehearsed) return error.figures;
    throw error;
  }
  throw new Error('a rehearsal always rolls back');
}

async function commitIn(
  ctx: RentalsContext,
  uow: UnitOfWork,
  caller: Token,
  request: RentRequest,
  priced: Priced,
  adoption?: Adoption,
): Promise<{ committed: Committed; admitted: Admitted | null }> {
  const { quote, rate, digest, options } = priced;
  const { offer, node } = quote;
  const terminationHours = options.terminationHours;
  const now = ctx.clock.now();
  const account = await uow.accounts.lock(caller.tenantId, now);
  if (!account) throw notFound(`tenant ${caller.tenantId}`);
  // the account lock serializes this tenant's rentals: a second request with the key sees the first
  if (request.idempotencyKey) {
    const earlier = await uow.instances.byIdempotencyKey(caller.tenantId, request.idempotencyKey);
    // answered after the commit: a replay may wait for the first request, which needs this lock
    if (earlier) return { committed: { instance: earlier, replayed: true }, admitted: null };
  }
  const commitment = adoption?.commitmentCents ?? rate * (terminationHours ?? 1);
  const admitted = await admitSpend(
    uow,
    caller,
    {
      kind: 'rental',
      fundsNeededCents: rate,
      fundsFor: 'the first hour costs',
      hours: terminationHours,
      hoursField: ['body', 'termination_hours'],
      commitmentCents: commitment,
      commitmentFor: 'rate x termination_hours',
      heldCents: adoption?.heldCents ?? 0,
      burnCentsPerHour: rate,
    },
    now,
    account,
  );
  const volumes = await ctx.volumes.forRental(uow, caller.tenantId, options.volumeIds, { provider: node.provider.name, region: offer.region }, now);
  const instance: Instance = {
    id: ctx.ids.newId(INSTANCE_ID_PREFIX),
    tenantId: caller.tenantId,
    tokenId: caller.id,
    nodeId: offer.id,
    provider: node.provider.name,
    offerId: node.offerId,
    name: request.name,
    status: 'provisioning',
    gpuType: offer.gpuType,
    gpuCount: offer.gpuCount,
    rateCentsPerHour: rate,
    createdAt: now,
    startedAt: null,
    paidUntil: new Date(now.getTime() + HOUR_MS),
    removalScheduledAt: null,
    windowEndsAt: adoption?.windowEndsAt ?? (terminationHours === null ? null : new Date(now.getTime() + terminationHours * HOUR_MS)),
    terminatedAt: null,
    machineId: null,
    sshHost: null,
    sshPort: null,
    idempotencyKey: request.idempotencyKey,
    requestDigest: digest,
    chargedCents: rate,
    commitmentCents: commitment,
    lastSeenAt: null,
    failure: null,
    launch: null,
    ...options.record,
    volumeIds: options.volumeIds,
    ledgerNote: adoption?.ledgerNote ?? null,
    minimumMinutes: adoption?.spot ? SPOT_MINIMUM_MINUTES : ON_DEMAND_MINIMUM_MINUTES,
    preemptedAt: null,
    recovery: null,
  };
  await uow.instances.add(instance);
  // the create is this process's while it renews the lease (launch.ts); once it runs out, the reconciler's
  await uow.launchLeases.take(instance.id, ctx.holder, new Date(now.getTime() + ctx.settings.launchLeaseMs));
  if (request.recovery) {
    const recovery = firstRecovery(instance, offer, request.recovery, recoveryOptionsOf(request));
    await uow.recoveries.add(recovery);
    instance.recovery = recoveryView(recovery);
  }
  await adoption?.adopt(uow, instance);
  if (priced.quoteId) await useQuote(uow, caller.tenantId, priced.quoteId, instance.id, now);
  await uow.volumes.attach(options.volumeIds, instance.id);
  await postEntry(uow, ctx.ids, { tenantId: caller.tenantId, kind: 'rental_hour', amountCents: -rate, reference: instance.id, description: ledgerDescription('first hour', instance), uniqueKey: `rent:${instance.id}`, at: now });
  return { committed: { instance, replayed: false, upstreamVolumeIds: volumes.upstreamIds }, admitted };
}

/** A quote rents once: under its row's lock, a second rental by it (another key) finds it used. */
async function useQuote(uow: UnitOfWork, tenantId: string, quoteId: string, instanceId: string, now: Date): Promise<void> {
  const held = await uow.quotes.lock(tenantId, quoteId);
  if (!held) throw notFound(`quote ${quoteId}`);
  usableQuote(held, now);
  await uow.quotes.markUsed(quoteId, instanceId);
}
