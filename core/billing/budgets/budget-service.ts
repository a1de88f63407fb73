import type { Clock } from '../../ports/clock.ts';
import type { Ids } from '../../ports/ids.ts';
import type { Storage } from '../../ports/storage.ts';
import type { BillingContext } from '../accounts/context.ts';
import type { BudgetView } from './budget.ts';
import { clearBudget } from './clear-budget.ts';
import { readBudget } from './read-budget.ts';
import { setBudget, type BudgetFollowUp, type BudgetSettings } from './set-budget.ts';

/** The tenant's monthly budget (docs/decisions.md, "Monthly budgets"): each use case a file of core/billing/budgets. */
export class BudgetService {
  private readonly context: BillingContext;
  private readonly followUp: BudgetFollowUp;

  /** `followUp`: what stops machines and mails alerts after a budget set under the spend commits (BudgetWatch). */
  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; followUp: BudgetFollowUp }) {
    this.context = { storage: deps.storage, clock: deps.clock, ids: deps.ids };
    this.followUp = deps.followUp;
  }

  get(tenantId: string): Promise<BudgetView> {
    return readBudget(this.context, tenantId);
  }

  set(tenantId: string, settings: BudgetSettings): Promise<BudgetView> {
    return setBudget(this.context, this.followUp, tenantId, settings);
  }

  clear(tenantId: string): Promise<void> {
    return clearBudget(this.context, tenantId);
  }
}
