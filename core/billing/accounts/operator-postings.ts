import type { Cents } from '../../money.ts';
import type { Deposit, LedgerEntry } from '../account.ts';
import { lockAccount, postFresh, type BillingContext } from './context.ts';

/** An operator's credit: a deposit record already confirmed, and its ledger entry. */
export async function operatorCredit(ctx: BillingContext, tenantId: string, amountCents: Cents, reason: string): Promise<Deposit> {
  return ctx.storage.transaction(async (uow) => {
    await lockAccount(ctx, uow, tenantId);
    const now = ctx.clock.now();
    const deposit: Deposit = { id: ctx.ids.newId('dep'), tenantId, kind: 'credit', status: 'confirmed', amountCents, reference: null, reason, createdAt: now, decidedAt: now, sessionId: null, conflict: null };
    await uow.deposits.add(deposit);
    await postFresh(ctx, uow, { tenantId, kind: 'credit', amountCents, reference: deposit.id, description: reason, uniqueKey: `deposit:${deposit.id}`, at: now });
    return deposit;
  });
}

/** An operator's manual charge: it may take the balance below zero (the operator's call). */
export async function operatorCharge(ctx: BillingContext, tenantId: string, amountCents: Cents, reason: string): Promise<LedgerEntry> {
  return ctx.storage.transaction(async (uow) => {
    await lockAccount(ctx, uow, tenantId);
    const id = ctx.ids.newId('chg');
    return postFresh(ctx, uow, { tenantId, kind: 'charge', amountCents: -amountCents, reference: id, description: reason, uniqueKey: `charge:${id}`, at: ctx.clock.now() });
  });
}
