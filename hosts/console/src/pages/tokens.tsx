import { useState } from 'preact/hooks';
import { api, run, type ApiError } from '../api.ts';
import { Busy, Confirm, CopyButton, ErrorText, Input, Loading, Time, useLoad } from '../components.tsx';
import { DOLLARS, usd } from '../format.ts';
import type { Scope, TokenCreated } from '../types.ts';

const SCOPES: { scope: Scope; what: string }[] = [
  { scope: 'read', what: 'search the market, read instances' },
  { scope: 'rent', what: 'rent, terminate and reboot machines' },
  { scope: 'manage', what: 'tokens, SSH keys, images, templates' },
  { scope: 'billing', what: 'balance, ledger, payments, emergency stop' },
];

/** Agent tokens: capped, shown once, revocable. */
export function TokensPage() {
  const tokens = useLoad(() => run(api().GET('/v1/tokens')));
  const self = useLoad(() => run(api().GET('/v1/tokens/self')));
  const [created, setCreated] = useState<TokenCreated | null>(null);
  return (
    <section>
      <h1>Tokens</h1>
      <p>Hand an agent a token with a spend cap and a burn ceiling: it cannot commit more than the cap, nor run more an hour than the ceiling, whatever it does.</p>
      <CreateToken
        onCreated={(t) => {
          setCreated(t);
          void tokens.reload();
        }}
      />
      {created && (
        <div class="card shown-once" role="status">
          <h2>Token “{created.name ?? created.id}” created</h2>
          <p>Copy it now: it is shown only once.</p>
          <p class="secret">
            <code>{created.token}</code> <CopyButton text={created.token} label="Copy the new token" />
          </p>
          <button type="button" class="secondary" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </div>
      )}
      <h2>Your tokens</h2>
      <ErrorText error={tokens.error} />
      {tokens.loading && !tokens.data && <Loading what="tokens" />}
      {tokens.data && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Tokens">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Scopes</th>
                <th scope="col" class="num">
                  Cap
                </th>
                <th scope="col" class="num">
                  Remaining
                </th>
                <th scope="col">Max hours</th>
                <th scope="col" class="num">
                  Burn / hour
                </th>
                <th scope="col">Expires</th>
                <th scope="col">Idle deadline</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.data
                .filter((t) => !t.revoked_at)
                .map((t) => (
                  <tr key={t.id}>
                    <td>
                      {t.name ?? t.id}
                      {self.data?.id === t.id && <small> (this session)</small>}
                    </td>
                    <td>{t.kind}</td>
                    <td>{t.scopes.join(', ')}</td>
                    <td class="num">{t.spend_limit_cents === null ? 'none' : usd(t.spend_limit_cents)}</td>
                    <td class="num">{t.spend_limit_cents === null ? '—' : usd(Math.max(0, t.spend_limit_cents - t.committed_cents))}</td>
                    <td>{t.max_rental_hours ?? '—'}</td>
                    <td class="num">
                      {usd(t.burn_cents_per_hour)}
                      {t.max_burn_cents_per_hour !== null && <small> of {usd(t.max_burn_cents_per_hour)}</small>}
                    </td>
                    <td>
                      <Time iso={t.expires_at} />
                    </td>
                    <td>
                      <Time iso={t.idle_deadline_at} />
                      {t.idle_timeout_minutes !== null && <small> after {t.idle_timeout_minutes} min idle</small>}
                    </td>
                    <td>
                      {self.data?.id !== t.id && (
                        <Confirm
                          small
                          danger
                          label="Revoke"
                          title={`Revoke ${t.name ?? t.id}?`}
                          confirmLabel="Revoke"
                          run={async () => {
                            const answer = await run(api().DELETE('/v1/tokens/{token_id}', { params: { path: { token_id: t.id } } }));
                            await tokens.reload();
                            return answer.error ?? null;
                          }}
                        >
                          <p>It stops working at once, and so does every token it issued. Machines it rented keep running.</p>
                        </Confirm>
                      )}
                    </td>
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function CreateToken({ onCreated }: { onCreated: (t: TokenCreated) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['read', 'rent']);
  const [cap, setCap] = useState('');
  const [hours, setHours] = useState('');
  const [burn, setBurn] = useState('');
  const [expires, setExpires] = useState('');
  const [idle, setIdle] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (cap && !DOLLARS.test(cap.trim())) return setError('The spend cap is dollars and cents, e.g. 25 or 25.50.');
    if (idle.trim() && !/^\d+$/.test(idle.trim())) return setError('The idle timeout is whole minutes, from 5 to 1440.');
    if (burn && !DOLLARS.test(burn.trim())) return setError('The burn ceiling is dollars and cents an hour, e.g. 5 or 5.50.');
    setBusy(true);
    setError(null);
    const answer = await run(
      api().POST('/v1/tokens', {
        body: {
          scopes,
          ...(name.trim() && { name: name.trim() }),
          ...(cap.trim() && { spend_limit_usd: cap.trim() }),
          ...(hours.trim() && { max_rental_hours: Number(hours) }),
          ...(burn.trim() && { max_burn_usd_per_hour: burn.trim() }),
          ...(expires && { expires_at: new Date(expires).toISOString() }),
          ...(idle.trim() && { idle_timeout_minutes: Number(idle) }),
        },
      }),
    );
    setBusy(false);
    if (answer.error) return setError(answer.error);
    setName('');
    setCap('');
    setHours('');
    setBurn('');
    setExpires('');
    setIdle('');
    onCreated(answer.data);
  };
  return (
    <form onSubmit={submit} class="card">
      <h2>New agent token</h2>
      <Input label="Name" value={name} onInput={setName} />
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map(({ scope, what }) => (
          <label key={scope} class="check">
            <input type="checkbox" checked={scopes.includes(scope)} onChange={(e) => setScopes((s) => ((e.target as HTMLInputElement).checked ? [...s, scope] : s.filter((x) => x !== scope)))} />
            {scope} <small>({what})</small>
          </label>
        ))}
      </fieldset>
      <Input label="Spend cap (USD)" hint="spend_limit_usd: the most it may commit, e.g. 25.00" inputMode="decimal" value={cap} onInput={setCap} />
      <Input label="Max rental hours" hint="max_rental_hours: the longest shutdown window it may set" type="number" min="1" value={hours} onInput={setHours} />
      <Input label="Burn ceiling (USD an hour)" hint="max_burn_usd_per_hour: the most its machines and volumes may cost together an hour, e.g. 5.00" inputMode="decimal" value={burn} onInput={setBurn} />
      <Input label="Expires at" hint="expires_at, in your time zone (empty: never)" type="datetime-local" value={expires} onInput={setExpires} />
      <Input
        label="Idle timeout (minutes)"
        hint="idle_timeout_minutes, 5 to 1440: with no request from it (or a token it issued) that long, its machines are terminated and it stops working (empty: none)"
        type="number"
        min="5"
        value={idle}
        onInput={setIdle}
      />
      <ErrorText error={error} />
      <Busy busy={busy}>Create token</Busy>
    </form>
  );
}
