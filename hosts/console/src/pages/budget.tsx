import { useState } from 'preact/hooks';
import { api, run, type ApiError } from '../api.ts';
import { Busy, ErrorText, Input } from '../components.tsx';
import { DOLLARS, dollarsText, usd } from '../format.ts';
import type { Account } from '../types.ts';

const PERCENTS = /^\s*(\d{1,3}\s*(,\s*\d{1,3}\s*)*)?$/;

/** This month's spend against the budget, and what happens at its percents. */
function BudgetFigures({ budget }: { budget: NonNullable<Account['budget']> }) {
  return (
    <>
      <p class="budget-spend">
        {usd(budget.spent_cents)} of {usd(budget.monthly_cents)} spent this month ({budget.percent} %)
      </p>
      <meter min={0} max={budget.monthly_cents} high={budget.monthly_cents * 0.8} optimum={0} value={Math.min(budget.spent_cents, budget.monthly_cents)} aria-label="Spent of the monthly budget" />
      <p>
        <small>
          {budget.next_alert_percent === null ? 'Every alert of this month was sent.' : `Next alert at ${budget.next_alert_percent} %.`}{' '}
          {budget.stop_at_limit ? 'At 100 % renting pauses and every machine stops.' : 'Nothing stops at 100 %.'}
        </small>
      </p>
    </>
  );
}

const NO_BUDGET = "No budget: nothing warns you of a month's spend, nothing stops at one.";

/**
 * The monthly budget: this month's spend against it, and the form that sets or removes it. Only a root credential
 * writes it (docs/decisions.md, "One tree of authority"): anyone else reads it, with no form.
 */
export function MonthlyBudget({ account, reload, root }: { account: Account; reload: () => Promise<void>; root: boolean }) {
  if (!root) {
    return (
      <section class="card" aria-labelledby="budget-title">
        <h2 id="budget-title">Monthly budget</h2>
        {account.budget ? (
          <>
            <BudgetFigures budget={account.budget} />
            <p>
              <small>Alerts at {account.budget.alert_percents.length ? account.budget.alert_percents.map((p) => `${p} %`).join(', ') : 'no percent'}.</small>
            </p>
          </>
        ) : (
          <p>{NO_BUDGET}</p>
        )}
        <p class="read-only">Only an owner or admin sets or changes the budget.</p>
      </section>
    );
  }
  return <BudgetForm account={account} reload={reload} />;
}

function BudgetForm({ account, reload }: { account: Account; reload: () => Promise<void> }) {
  const budget = account.budget;
  const [monthly, setMonthly] = useState(budget ? dollarsText(budget.monthly_cents) : '');
  const [alerts, setAlerts] = useState((budget?.alert_percents ?? [50, 80, 100]).join(', '));
  const [stop, setStop] = useState(budget?.stop_at_limit ?? false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const save = async (event: Event) => {
    event.preventDefault();
    if (!DOLLARS.test(monthly.trim()) || Number(monthly) <= 0) return setError('The budget is dollars and cents above 0, e.g. 500 or 99.50.');
    if (!PERCENTS.test(alerts)) return setError('Alert percents are whole numbers separated by commas, e.g. 50, 80, 100.');
    const alertPercents = alerts.split(',').map((p) => p.trim()).filter(Boolean).map(Number);
    setBusy(true);
    setError(null);
    setSaved(null);
    const answer = await run(api().PUT('/v1/billing/budget', { body: { monthly_usd: monthly.trim(), alert_percents: alertPercents, stop_at_limit: stop } }));
    setBusy(false);
    if (answer.error) return setError(answer.error);
    setSaved('Budget saved.');
    await reload();
  };
  const remove = async () => {
    setBusy(true);
    setError(null);
    const answer = await run(api().DELETE('/v1/billing/budget'));
    setBusy(false);
    if (answer.error) return setError(answer.error);
    setSaved('Budget removed.');
    setMonthly('');
    await reload();
  };
  return (
    <form class="card" onSubmit={save} aria-labelledby="budget-title">
      <h2 id="budget-title">Monthly budget</h2>
      {budget ? <BudgetFigures budget={budget} /> : <p>{NO_BUDGET}</p>}
      <Input label="Budget per calendar month (USD)" hint="monthly_usd: first hours, hour blocks and usage charged in the month (UTC); refunds do not lower it" inputMode="decimal" value={monthly} onInput={setMonthly} />
      <Input label="Alert at (percent)" hint="alert_percents: the people of the tenant are mailed, and budget.threshold_reached sent, once a month at each" value={alerts} onInput={setAlerts} />
      <label class="check">
        <input type="checkbox" checked={stop} onChange={(e) => setStop((e.target as HTMLInputElement).checked)} /> Stop at 100 %: pause renting and stop every machine
      </label>
      <ErrorText error={error} />
      {saved && <p role="status">{saved}</p>}
      <Busy busy={busy}>Save budget</Busy>{' '}
      {budget && (
        <button type="button" onClick={remove} disabled={busy}>
          Remove budget
        </button>
      )}
    </form>
  );
}
