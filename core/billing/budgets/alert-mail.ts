import { isolated } from '../isolated.ts';
import { formatUsd } from '../../money.ts';
import type { BudgetAlert } from '../../ports/budget-storage.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Mail, MailAllowance, Mailer } from '../../ports/mailer.ts';
import type { Storage } from '../../ports/storage.ts';
import { monthName } from './budget.ts';

/** How long a sender holds the alerts it took before another may take them again (it died mid-way). */
const CLAIM_MS = 10 * 60_000;
const BATCH = 50;

export interface AlertMailContext {
  storage: Storage;
  clock: Clock;
  mailer: Mailer;
  /** Every mail to an address takes from its allowance (docs/decisions.md, "Mail to one address"). */
  allowance: MailAllowance;
}

/**
 * Mails the alerts told and not mailed yet (the outbox rows of budget_alerts), to every person of the tenant with
 * an address, each mail within the address's allowance; a tenant without one has the webhook event alone. Each alert is taken by one sender at a time (a
 * sweep that runs twice, a request's nudge beside the sweep), and marked mailed once every person's mail left; a
 * failure leaves it for the next sender once the claim ends.
 */
export async function mailDueAlerts(ctx: AlertMailContext): Promise<{ mailed: number; errors: string[] }> {
  const report = { mailed: 0, errors: [] as string[] };
  const now = ctx.clock.now();
  const alerts = await ctx.storage.autocommit((uow) => uow.budgets.claimUnmailed(now, new Date(now.getTime() + CLAIM_MS), BATCH));
  for (const alert of alerts) {
    await isolated(report.errors, `budget alert ${alert.percent} % of ${alert.tenantId}`, async () => {
      const people = await ctx.storage.read((uow) => uow.identities.listForTenant(alert.tenantId));
      const addresses = [...new Set(people.flatMap((person) => (person.email ? [person.email] : [])))];
      for (const to of addresses) {
        // past the address's allowance nothing is mailed to it; the alert is told all the same (its webhook event)
        if (await ctx.allowance.take(to)) await ctx.mailer.send(alertMail(to, alert));
      }
      await ctx.storage.autocommit((uow) => uow.budgets.markMailed(alert, ctx.clock.now()));
      report.mailed++;
    });
  }
  return report;
}

/** The mail of one alert. */
export const alertMail = (to: string, alert: BudgetAlert): Mail => ({
  to,
  subject: `Budget alert: ${alert.percent} % of your monthly GPU budget is spent`,
  text: [
    `${formatUsd(alert.spentCents)} USD of your monthly budget of ${formatUsd(alert.monthlyCents)} USD was charged in ${monthName(alert.month)} (UTC),`,
    `reaching ${alert.percent} % (tenant ${alert.tenantId}).`,
    '',
    alert.percent >= 100 && alert.stopAtLimit
      ? 'The budget stops renting at its limit: renting is paused and every machine was stopped. Raise the budget above the spend (the Billing page of the console, or PUT /v1/billing/budget) and resume renting, or wait for the next month.'
      : 'Nothing was stopped. See the Billing page of the console, or GET /v1/billing/budget, for the month so far.',
  ].join('\n'),
});
