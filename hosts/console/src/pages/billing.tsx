import { lazy, Suspense } from 'preact/compat';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, run, type ApiError } from '../api.ts';
import { Busy, Confirm, ErrorText, Input, Loading, Time, useLoad, useTick } from '../components.tsx';
import { count, countdown, DOLLARS, dollarsText, localDay, usd } from '../format.ts';
import type { Account, Deposit, LedgerEntry } from '../types.ts';
import { MonthlyBudget } from './budget.tsx';

const SpendChart = lazy(() => import('./spend-chart.tsx'));
const PAGE = 20;
const CHART_DAYS = 30;

export function BillingPage() {
  const [synced, setSynced] = useState<string | null>(null);
  const [syncError, setSyncError] = useState<ApiError | null>(null);
  const account = useLoad(() => run(api().GET('/v1/billing/account')));
  const ledger = useLoad(() => run(api().GET('/v1/billing/ledger', { params: { query: { limit: 1000 } } })));
  const deposits = useLoad(() => run(api().GET('/v1/billing/deposits')));
  // only root writes the budget: anyone else is shown it without the form
  const self = useLoad(() => run(api().GET('/v1/tokens/self')));
  const reload = async () => {
    await Promise.all([account.reload(), ledger.reload(), deposits.reload()]);
  };
  // back from a card checkout: ask the processor how it went, once
  useEffect(() => {
    const query = new URLSearchParams(location.search);
    const session = query.get('session_id');
    if (!session) return;
    history.replaceState(null, '', location.pathname);
    void run(api().POST('/v1/billing/checkout/{session_id}/sync', { params: { path: { session_id: session } } })).then(async (answer) => {
      if (answer.error) setSyncError(answer.error);
      else setSynced(answer.data.status === 'confirmed' ? `${usd(answer.data.amount_cents)} was added by card.` : `The card payment is ${answer.data.status}.`);
      await reload();
    });
  }, []);

  return (
    <section>
      <h1>Billing</h1>
      {synced && <p role="status">{synced}</p>}
      <ErrorText error={syncError} />
      <ErrorText error={account.error} />
      {account.loading && !account.data && <Loading what="the account" />}
      {account.data && <Figures account={account.data} />}
      {account.data && !self.loading && <MonthlyBudget account={account.data} reload={reload} root={self.data?.root === true} />}
      <h2>Spend per day</h2>
      {ledger.data ? <Spend entries={ledger.data} /> : <Loading what="the ledger" />}
      {account.data && (
        <div class="two">
          <AddFunds account={account.data} reload={reload} />
          <AutoRecharge account={account.data} reload={reload} />
        </div>
      )}
      <h2>Ledger</h2>
      <ErrorText error={ledger.error} />
      {ledger.data && <Ledger entries={ledger.data} />}
      <h2>Deposits</h2>
      <ErrorText error={deposits.error} />
      {deposits.data && <Deposits deposits={deposits.data} />}
      {account.data && <Stop account={account.data} reload={reload} />}
    </section>
  );
}

function Figures({ account: a }: { account: Account }) {
  const now = useTick(1_000);
  return (
    <>
      {a.pause && (
        <p class="warning" role="status">
          Renting is paused ({a.pause.kind.replace('_', ' ')}
          {a.pause.reason ? `: ${a.pause.reason}` : ''}) since <Time iso={a.pause.paused_at} now={now} />.
        </p>
      )}
      <ul class="cards figures">
        <li class="card">
          <h2>Balance</h2>
          <p class="big">{usd(a.balance_cents)}</p>
        </li>
        <li class="card">
          <h2>Owed</h2>
          <p class="big">{usd(a.owed_cents)}</p>
          <small>usage that ran, not yet paid</small>
        </li>
        <li class="card">
          <h2>Available</h2>
          <p class="big">{usd(a.available_cents)}</p>
        </li>
        <li class="card">
          <h2>Burn</h2>
          <p class="big">
            {usd(a.burn_cents_per_hour)}
            <small> per hour</small>
          </p>
          <small>{count(a.running_machines, 'machine')} running</small>
        </li>
        <li class="card">
          <h2>Money runs out</h2>
          {a.stops_at ? (
            <>
              <p class="big" aria-label={`in ${countdown(a.stops_at, now)}`}>
                <span aria-hidden="true">{countdown(a.stops_at, now)}</span>
              </p>
              <small>
                machines stop <Time iso={a.stops_at} now={now} />
              </small>
            </>
          ) : (
            <p class="big">{a.paid_to_removal ? 'paid to removal' : 'never'}</p>
          )}
        </li>
      </ul>
    </>
  );
}

function Spend({ entries }: { entries: LedgerEntry[] }) {
  const days = useMemo(() => {
    const byDay = new Map<string, number>();
    const start = new Date();
    start.setHours(0, 0, 0, 0);
    start.setDate(start.getDate() - (CHART_DAYS - 1));
    for (let i = 0; i < CHART_DAYS; i++) {
      const d = new Date(start);
      d.setDate(start.getDate() + i);
      byDay.set(localDay(d.toISOString()), 0);
    }
    // a charge lowers the balance; a refund of a charge comes back as a positive rental entry and lowers spend
    for (const e of entries) {
      const day = localDay(e.created_at);
      if (!byDay.has(day) || e.kind === 'deposit' || e.kind === 'credit') continue;
      byDay.set(day, byDay.get(day)! - e.amount_cents);
    }
    return [...byDay].map(([day, cents]) => ({ day, cents: Math.max(0, cents) }));
  }, [entries]);
  const total = days.reduce((s, d) => s + d.cents, 0);
  return (
    <figure>
      <Suspense fallback={<Loading what="the chart" />}>
        <SpendChart days={days} />
      </Suspense>
      <figcaption>
        {usd(total)} spent in the last {CHART_DAYS} days.{' '}
        <details>
          <summary>Spend per day as a table</summary>
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col" class="num">
                  Spend
                </th>
              </tr>
            </thead>
            <tbody>
              {days
                .filter((d) => d.cents > 0)
                .map((d) => (
                  <tr key={d.day}>
                    <td>{d.day}</td>
                    <td class="num">{usd(d.cents)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </details>
      </figcaption>
    </figure>
  );
}

function Ledger({ entries }: { entries: LedgerEntry[] }) {
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(entries.length / PAGE));
  const shown = entries.slice(page * PAGE, page * PAGE + PAGE);
  return (
    <>
      <div class="table-wrap" tabIndex={0} role="region" aria-label="Ledger entries">
        <table class="ledger">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col">Description</th>
              <th scope="col">Reference</th>
              <th scope="col" class="num">
                Amount
              </th>
              <th scope="col" class="num">
                Balance after
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((e) => (
              <tr key={e.id}>
                <td>
                  <Time iso={e.created_at} />
                </td>
                <td>{e.kind}</td>
                <td>{e.description ?? ''}</td>
                <td>{e.reference ?? ''}</td>
                <td class={`num ${e.amount_cents < 0 ? 'minus' : 'plus'}`}>{usd(e.amount_cents)}</td>
                <td class="num">{usd(e.balance_after_cents)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Ledger pages">
        <button type="button" class="secondary small" disabled={page === 0} onClick={() => setPage(page - 1)}>
          Newer
        </button>
        <span>
          Page {page + 1} of {pages} ({entries.length} entries)
        </span>
        <button type="button" class="secondary small" disabled={page + 1 >= pages} onClick={() => setPage(page + 1)}>
          Older
        </button>
      </nav>
    </>
  );
}

function Deposits({ deposits }: { deposits: Deposit[] }) {
  if (deposits.length === 0) return <p>No deposits yet.</p>;
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Deposits">
      <table>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Kind</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Amount
            </th>
            <th scope="col">Reference</th>
          </tr>
        </thead>
        <tbody>
          {deposits.map((d) => (
            <tr key={d.id}>
              <td>
                <Time iso={d.created_at} />
              </td>
              <td>{d.kind.replace('_', ' ')}</td>
              <td>
                {d.status}
                {d.reason && <small> ({d.reason})</small>}
              </td>
              <td class="num">{usd(d.amount_cents)}</td>
              <td>{d.reference ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function AddFunds({ account, reload }: { account: Account; reload: () => Promise<void> }) {
  const [amount, setAmount] = useState('25.00');
  const [reference, setReference] = useState('');
  const [busy, setBusy] = useState<'card' | 'bank' | null>(null);
  const [error, setError] = useState<ApiError | string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const valid = () => (DOLLARS.test(amount.trim()) ? null : 'The amount is dollars and cents, e.g. 25 or 25.50.');
  const card = async () => {
    const bad = valid();
    if (bad) return setError(bad);
    setBusy('card');
    setError(null);
    const answer = await run(api().POST('/v1/billing/checkout', { body: { amount_usd: amount.trim() } }));
    if (answer.error) {
      setBusy(null);
      return setError(answer.error);
    }
    location.assign(answer.data.url);
  };
  const bank = async () => {
    const bad = valid();
    if (bad) return setError(bad);
    setBusy('bank');
    setError(null);
    const answer = await run(api().POST('/v1/billing/deposits', { body: { amount_usd: amount.trim(), ...(reference.trim() && { reference: reference.trim() }) } }));
    setBusy(null);
    if (answer.error) return setError(answer.error);
    setNote(`Deposit of ${usd(answer.data.amount_cents)} recorded: it is credited once an operator confirms the transfer.`);
    await reload();
  };
  return (
    <form class="card" onSubmit={(e) => (e.preventDefault(), void (account.payments.card ? card() : bank()))}>
      <h2>Add funds</h2>
      <Input label="Amount (USD)" hint="amount_usd, e.g. 25.00" inputMode="decimal" required value={amount} onInput={setAmount} />
      {account.payments.bank_transfer && <Input label="Transfer reference" hint="optional, as on your bank transfer" value={reference} onInput={setReference} />}
      <ErrorText error={error} />
      {note && <p role="status">{note}</p>}
      <div class="actions">
        {account.payments.card && (
          <Busy busy={busy === 'card'} type="button" onClick={card}>
            Pay by card
          </Busy>
        )}
        {account.payments.bank_transfer && (
          <Busy busy={busy === 'bank'} type="button" class="secondary" onClick={bank}>
            Record a bank transfer
          </Busy>
        )}
      </div>
      {account.card && (
        <p>
          Saved card: {account.card.brand} ending {account.card.last4}.{' '}
          <Confirm
            small
            label="Forget card"
            title="Forget the saved card?"
            confirmLabel="Forget card"
            run={async () => {
              const answer = await run(api().DELETE('/v1/billing/card'));
              await reload();
              return answer.error ?? null;
            }}
          >
            <p>Auto-recharge turns off; the next card payment saves a card again.</p>
          </Confirm>
        </p>
      )}
    </form>
  );
}

function AutoRecharge({ account, reload }: { account: Account; reload: () => Promise<void> }) {
  const ar = account.auto_recharge;
  const [enabled, setEnabled] = useState(ar.enabled);
  const [threshold, setThreshold] = useState(ar.threshold_cents ? dollarsText(ar.threshold_cents) : '10.00');
  const [amount, setAmount] = useState(ar.amount_cents ? dollarsText(ar.amount_cents) : '50.00');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | string | null>(null);
  const [saved, setSaved] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (enabled && (!DOLLARS.test(threshold.trim()) || !DOLLARS.test(amount.trim()))) return setError('Threshold and amount are dollars and cents, e.g. 10 or 10.50.');
    setBusy(true);
    setError(null);
    setSaved(false);
    const answer = await run(api().PUT('/v1/billing/auto-recharge', { body: enabled ? { enabled, threshold_usd: threshold.trim(), amount_usd: amount.trim() } : { enabled } }));
    setBusy(false);
    if (answer.error) return setError(answer.error);
    setSaved(true);
    await reload();
  };
  return (
    <form class="card" onSubmit={submit}>
      <h2>Auto-recharge</h2>
      <p>
        {ar.payments_last_24h} of at most {ar.max_payments_per_24h} automatic payments in the last 24 hours.
        {!account.card && ' It needs a saved card: pay by card once.'}
      </p>
      {ar.last_error && <p class="error">Last attempt failed: {ar.last_error}</p>}
      <label class="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled((e.target as HTMLInputElement).checked)} /> Recharge automatically
      </label>
      <Input label="When available funds fall under (USD)" hint="threshold_usd" inputMode="decimal" value={threshold} onInput={setThreshold} />
      <Input label="Charge the card (USD)" hint="amount_usd" inputMode="decimal" value={amount} onInput={setAmount} />
      <ErrorText error={error} />
      {saved && <p role="status">Saved.</p>}
      <Busy busy={busy}>Save auto-recharge</Busy>
    </form>
  );
}

function Stop({ account, reload }: { account: Account; reload: () => Promise<void> }) {
  const [typed, setTyped] = useState('');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const stop = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const answer = await run(api().POST('/v1/billing/stop', { body: reason.trim() ? { reason: reason.trim() } : {} }));
    setBusy(false);
    if (answer.error) return setError(answer.error);
    setTyped('');
    setDone(`Stopped: ${count(answer.data.terminated.length, 'machine')} terminated, renting paused.`);
    await reload();
  };
  const resume = async () => {
    setBusy(true);
    const answer = await run(api().POST('/v1/billing/resume'));
    setBusy(false);
    if (answer.error) return setError(answer.error);
    setDone('Renting is open again.');
    await reload();
  };
  return (
    <section class="card danger-zone" aria-labelledby="stop-title">
      <h2 id="stop-title">Emergency stop</h2>
      <p>Every machine stops at once (disks deleted, volumes kept) and renting pauses until you resume it.</p>
      {done && <p role="status">{done}</p>}
      <ErrorText error={error} />
      {account.pause?.tenant_can_resume ? (
        <Busy busy={busy} type="button" onClick={resume}>
          Resume renting
        </Busy>
      ) : (
        <form onSubmit={stop}>
          <Input label="Reason" hint="optional, kept with the pause" value={reason} onInput={setReason} />
          <Input label="Type STOP to confirm" autocomplete="off" value={typed} onInput={setTyped} />
          <Busy busy={busy} class="danger" disabled={typed !== 'STOP'}>
            Stop everything
          </Busy>
        </form>
      )}
    </section>
  );
}
