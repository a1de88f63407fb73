import { isolated } from '../isolated.ts';
import type { PaymentsContext } from './context.ts';
import { settleCheckout } from './settle-checkout.ts';

/** What the catch-up settled, and the conflicts it left for an operator. */
export interface CheckoutReport {
  settled: number;
  conflicts: string[];
  errors: string[];
}

/**
 * The sweep's catch-up for missed webhooks: every pending checkout is asked about once per pass. One checkout's
 * failure is recorded and the others carry on; a conflict is left for an operator.
 */
export async function settlePendingCheckouts(ctx: PaymentsContext): Promise<CheckoutReport> {
  const report: CheckoutReport = { settled: 0, conflicts: [], errors: [] };
  const pending = await ctx.storage.read((uow) => uow.deposits.pendingCheckouts());
  for (const deposit of pending) {
    if (!deposit.sessionId) continue; // its session is still being opened
    const sessionId = deposit.sessionId;
    await isolated(report.errors, `checkout ${sessionId}`, async () => {
      const state = await ctx.payments.getCheckout(sessionId);
      if (!state || state.status === 'open') return;
      const settled = await settleCheckout(ctx, state);
      if (settled.conflict) report.conflicts.push(`deposit ${settled.id}: ${settled.conflict}`);
      else if (settled.status !== 'pending') report.settled++;
    });
  }
  return report;
}
