import type { Account } from '../billing/account.ts';
import { accountFigures } from '../billing/account-view.ts';
import { DomainError, invalidInput, notFound } from '../errors.ts';
import { formatUsd, type Cents } from '../money.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import { isActive, maxRentalHours, mayRent, remainingCents, type Token } from '../tenancy/token.ts';

/** What can cost money: each passes the one gate below in the transaction that makes it. */
export type SpendKind = 'rental' | 'reservation' | 'spot claim' | 'volume';

export interface Spend {
  kind: SpendKind;
  /**
   * What the tenant's available funds must cover now: what this transaction charges (a rental's first hour), or
   * what the resource costs before the next chance to stop it (a volume: its first 24 hours of storage). 0 for a
   * booking that charges nothing until it starts (a reservation, a spot claim): the start passes the gate again.
   */
  fundsNeededCents: Cents;
  /** Why the funds are needed, for the 402 ("the first hour costs"). */
  fundsFor: string;
  /** The window asked for, in hours; null when the request gave none. */
  hours: number | null;
  /** Where the hours are in the request (for a 422 naming the field). */
  hoursField: (string | number)[];
  /** The most this resource may be charged over its window: recorded on the caller's token and every ancestor. */
  commitmentCents: Cents;
  /** How the commitment is made up, for the 402 ("rate x termination_hours"). */
  commitmentFor: string;
  /**
   * Cents an earlier booking already holds on the chain for this very spend (a reservation being started): they
   * count as free for the cap check, and this spend's commitment replaces them.
   */
  heldCents?: Cents;
  /**
   * What the resource costs an hour from now on (a machine's rate, a volume's storage rate): it must fit under every
   * burn ceiling of the chain. 0 for a booking, which burns nothing until it starts: the start passes the gate again.
   */
  burnCentsPerHour: Cents;
  /**
   * A booking's rate once it starts (a reservation's quote, a spot claim's bid x GPUs): it burns nothing now, but a
   * rate that alone passes a burn ceiling of the chain could never start, so it is refused now, as a rental would be.
   * What else burns when it starts is checked then.
   */
  bookedBurnCentsPerHour?: Cents;
}

export interface Admitted {
  account: Account;
  /** The caller's token followed by its ancestors, locked until the transaction ends. */
  chain: Token[];
}

const pausedDetail = (account: Account & { pause: NonNullable<Account['pause']> }, kind: SpendKind): string => {
  const { pause } = account;
  const how = pause.kind === 'hold' ? 'an operator placed a hold; only an operator can lift it' : 'POST /v1/billing/resume reopens renting';
  const what = kind === 'volume' ? '; volumes cost money too, so none is made until it is lifted' : '';
  return `renting is paused (${pause.kind.replace('_', ' ')}${pause.reason ? `: ${pause.reason}` : ''})${what}; ${how}`;
};

/**
 * Every burn ceiling of the chain holds with this spend's rate added (docs/decisions.md, "Burn ceilings"). What
 * burns is summed now, under the account lock every spend of the tenant takes, so spends in parallel see each
 * other's machines and volumes and cannot pass a ceiling together.
 */
async function checkBurn(uow: UnitOfWork, chain: readonly Token[], spend: Spend): Promise<void> {
  const ceilings = chain.filter((link) => link.maxBurnCentsPerHour !== null);
  if (ceilings.length === 0) return;
  const burning = await uow.tokens.burnCentsPerHour(chain[0]!.tenantId, ceilings.map((link) => link.id));
  for (const link of ceilings) {
    const burn = burning.get(link.id) ?? 0;
    const ceiling = link.maxBurnCentsPerHour!;
    if (burn + spend.burnCentsPerHour <= ceiling) continue;
    const whose = link.id === chain[0]!.id ? 'this token' : `token ${link.id}, which issued this one,`;
    throw new DomainError(
      'BURN_CEILING_EXCEEDED',
      `this ${spend.kind} would burn ${spend.burnCentsPerHour} cents an hour; what runs under ${whose} burns ${burn} cents an hour now and its ceiling is ${ceiling} (max_burn_usd_per_hour ${formatUsd(ceiling)}); end a machine or a volume under it first`,
    );
  }
}

/** A booking whose rate alone passes a burn ceiling of the chain could never start: refused at booking. */
function checkBookedBurn(chain: readonly Token[], spend: Spend): void {
  const rate = spend.bookedBurnCentsPerHour ?? 0;
  const link = chain.find((token) => token.maxBurnCentsPerHour !== null && rate > token.maxBurnCentsPerHour);
  if (!link) return;
  const whose = link.id === chain[0]!.id ? 'this token' : `token ${link.id}, which issued this one,`;
  throw new DomainError(
    'BURN_CEILING_EXCEEDED',
    `this ${spend.kind} would burn ${rate} cents an hour once started, and the ceiling of ${whose} is ${link.maxBurnCentsPerHour} (max_burn_usd_per_hour ${formatUsd(link.maxBurnCentsPerHour!)}): it could never start; ${spend.kind === 'spot claim' ? 'bid at most the ceiling over gpu_count' : 'choose a node that costs less an hour'}`,
  );
}

/**
 * The one spend gate (docs/decisions.md, "One spend gate"): everything that can cost money passes it in the
 * transaction that creates it, so what it checks and what it records commit together with the thing paid for.
 * In order: the account (locked: it serializes the tenant's spends), the caller's token chain (locked in id
 * order) still active, renting not paused, a window when any token of the chain has a cap or a maximum of
 * hours and no longer than that maximum, available funds for what is needed now, the commitment within
 * what the chain's caps leave, and the hourly rate within what each burn ceiling of the chain leaves. The
 * commitment is then recorded on every token of the chain.
 *
 * `account` is the account the caller already locked in this transaction (to look for an idempotent replay
 * under it); the gate locks it otherwise.
 */
export async function admitSpend(uow: UnitOfWork, caller: Token, spend: Spend, now: Date, locked?: Account): Promise<Admitted> {
  const account = locked ?? (await uow.accounts.lock(caller.tenantId, now));
  if (!account) throw notFound(`tenant ${caller.tenantId}`);
  const chain = await uow.tokens.chain(caller.tenantId, caller.id, { lock: true });
  if (chain.length === 0 || !chain.every((token) => isActive(token, now))) {
    throw new DomainError('UNAUTHENTICATED', 'the token or one that issued it was revoked or expired');
  }
  // a booking made before its credential lost rent (a person demoted) starts as that credential: it may not spend now
  if (!mayRent(chain[0]!, now)) throw new DomainError('SCOPE_REQUIRED', `this ${spend.kind} needs a token with the rent scope, which this one no longer holds`);
  if (account.pause) throw new DomainError('CONFLICT', pausedDetail({ ...account, pause: account.pause }, spend.kind));

  const held = spend.heldCents ?? 0;
  const remaining = remainingCents(held === 0 ? chain : chain.map((link) => ({ ...link, committedCents: Math.max(0, link.committedCents - held) })));
  const maxHours = maxRentalHours(chain);
  const field = spend.hoursField[spend.hoursField.length - 1];
  if ((remaining !== null || maxHours !== null) && spend.hours === null) {
    const why = remaining !== null ? 'a spend cap' : `a maximum rental duration of ${maxHours} hours`;
    throw invalidInput(spend.hoursField, `required: this token (or one that issued it) has ${why}, so a ${spend.kind} needs ${field === 'hours' ? 'hours' : 'a shutdown window in hours'}`);
  }
  if (maxHours !== null && spend.hours !== null && spend.hours > maxHours) throw invalidInput(spend.hoursField, `at most ${maxHours} for this token`);

  if (spend.fundsNeededCents > 0) {
    // only machines past their paid time owe anything, so they alone (with unsettled usage) decide what is available
    const figures = accountFigures(account.balanceCents, await uow.instances.overdue(caller.tenantId, now), now, {
      stopsAt: false,
      unsettledUsageCents: await uow.usage.unsettledCents(caller.tenantId),
    });
    if (figures.availableCents < spend.fundsNeededCents) {
      throw new DomainError('INSUFFICIENT_FUNDS', `${spend.fundsFor} ${spend.fundsNeededCents} cents and ${figures.availableCents} are available; add funds first`);
    }
  }
  if (remaining !== null && spend.commitmentCents > remaining) {
    throw new DomainError('SPEND_CAP_EXCEEDED', `this ${spend.kind} commits ${spend.commitmentCents} cents (${spend.commitmentFor}) and the token's cap leaves ${remaining}`);
  }
  if (spend.burnCentsPerHour > 0) await checkBurn(uow, chain, spend);
  checkBookedBurn(chain, spend);
  const added = spend.commitmentCents - held;
  if (added !== 0) await uow.tokens.addCommitment(caller.id, added);
  return { account, chain };
}
