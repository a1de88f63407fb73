import type { MonthlyBudget } from '../billing/budgets/budget.ts';
import type { Cents } from '../money.ts';

/** An alert percent told in a month: the row that makes telling it twice impossible, and its mail in waiting. */
export interface BudgetAlert {
  tenantId: string;
  /** The first moment of the month (UTC). */
  month: Date;
  percent: number;
  monthlyCents: Cents;
  spentCents: Cents;
  stopAtLimit: boolean;
  toldAt: Date;
}

/** A budget whose month this transaction charged, with what the month holds now. */
export interface ChargedBudget {
  budget: MonthlyBudget;
  month: Date;
  spentCents: Cents;
  /** The percents told in that month, ascending. */
  toldPercents: number[];
}

/** Monthly budgets, the month's spend the ledger keeps, and the alerts told (docs/decisions.md, "Monthly budgets"). */
export interface BudgetStore {
  get(tenantId: string): Promise<MonthlyBudget | null>;
  put(budget: MonthlyBudget): Promise<void>;
  /** false: the tenant had none. */
  remove(tenantId: string): Promise<boolean>;
  /** What the ledger charged the tenant in the month starting at `month`: first hours, hour blocks, usage. */
  spent(tenantId: string, month: Date): Promise<Cents>;
  /** The percents told in that month, ascending. */
  told(tenantId: string, month: Date): Promise<number[]>;
  /** Forgets that these percents were told in the month: a charge that reaches them tells them again. */
  rearm(tenantId: string, month: Date, percents: readonly number[]): Promise<void>;
  /**
   * Records alerts told, their mail waiting, in one statement; answers those recorded (an alert whose percent was
   * told that month already is left out: nothing changed for it).
   */
  recordAlerts(alerts: readonly BudgetAlert[]): Promise<BudgetAlert[]>;
  /**
   * The budgets of the tenants whose month spend this very transaction added to (one read, however many). The spend
   * leaves out the first hours of other rentals still in flight (docs/decisions.md, "Monthly budgets").
   */
  chargedHere(): Promise<ChargedBudget[]>;
  /** Every budget with a spend in the month starting at `month`, figured as chargedHere figures it: the sweep's evaluation. */
  inMonth(month: Date): Promise<ChargedBudget[]>;
  /**
   * Takes up to `limit` alerts whose mail has not left and that nobody else holds, for `until` (another sender
   * may take one again once that passes: a sender that died). Oldest first.
   */
  claimUnmailed(now: Date, until: Date, limit: number): Promise<BudgetAlert[]>;
  markMailed(alert: Pick<BudgetAlert, 'tenantId' | 'month' | 'percent'>, at: Date): Promise<void>;
  /** Tenants whose renting is paused for their budget and that still have live machines. */
  pausedWithMachines(): Promise<string[]>;
}
