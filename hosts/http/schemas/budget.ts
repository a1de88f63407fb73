import { z } from 'zod';
import type { BudgetView } from '../../../core/billing/budgets/budget.ts';
import { MAX_MONTHLY_CENTS } from '../../../core/billing/budgets/set-budget.ts';
import { usdAmount } from './common.ts';

const DEFAULT_ALERT_PERCENTS = [50, 80, 100];

export const BudgetUpdate = z
  .strictObject({
    monthly_usd: usdAmount({ maxCents: MAX_MONTHLY_CENTS }, '500.00').meta({ description: `USD a calendar month (UTC) may charge; > 0 and at most ${MAX_MONTHLY_CENTS / 100}.` }),
    alert_percents: z
      .array(z.int().min(1).max(100))
      .max(20)
      .default(DEFAULT_ALERT_PERCENTS)
      .meta({ description: 'Whole percents (1 to 100, each once) of the budget at which the people of the tenant are mailed and budget.threshold_reached is sent, once a month each. Default [50, 80, 100].' }),
    stop_at_limit: z.boolean().default(false).meta({ description: 'At 100 %: renting pauses (kind budget) and every machine stops, as an emergency stop does.' }),
  })
  .meta({ id: 'BudgetUpdate', examples: [{ monthly_usd: '500.00', alert_percents: [50, 80, 100], stop_at_limit: true }] });

export const BudgetOut = z
  .object({
    monthly_cents: z.int(),
    spent_cents: z.int().meta({ description: 'What the ledger charged this calendar month (UTC): first hours, hour blocks, usage (volume storage too), less what was refunded in the same month for the same thing (a rental refunded in full counts 0).' }),
    percent: z.int().meta({ description: 'The whole percent of the budget spent, rounded down; above 100 past it.' }),
    alert_percents: z.array(z.int()).meta({ description: 'Ascending.' }),
    next_alert_percent: z.int().nullable().meta({ description: 'The lowest alert percent not told this month; null: all told.' }),
    stop_at_limit: z.boolean(),
  })
  .meta({
    id: 'BudgetOut',
    examples: [{ monthly_cents: 50000, spent_cents: 41250, percent: 82, alert_percents: [50, 80, 100], next_alert_percent: 100, stop_at_limit: true }],
  });

export const budgetOut = (view: BudgetView): z.input<typeof BudgetOut> => ({
  monthly_cents: view.monthlyCents,
  spent_cents: view.spentCents,
  percent: view.percent,
  alert_percents: view.alertPercents,
  next_alert_percent: view.nextAlertPercent,
  stop_at_limit: view.stopAtLimit,
});
