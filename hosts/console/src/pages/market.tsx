import { lazy, Suspense } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import type { operations } from '../../../client/api-client.ts';
import { api, run, type ApiError } from '../api.ts';
import { Busy, ErrorText, Field, Loading, useLoad } from '../components.tsx';
import { count, usd, when } from '../format.ts';
import { BASE } from '../router.ts';
import type { GpuSearch, Node } from '../types.ts';

const PriceChart = lazy(() => import('./price-chart.tsx'));

/** Nodes picked on this page, handed to the rent page without a second search. */
export const pickedNodes = new Map<string, Node>();

/** Every GET /v1/gpus filter, labelled by the API's own name for it. */
const TEXT_FILTERS: { name: string; label: string; type: 'text' | 'number'; hint?: string; step?: string }[] = [
  { name: 'gpu_type', label: 'GPU type', type: 'text', hint: 'e.g. H100, A100, RTX4090' },
  { name: 'gpu_count', label: 'GPU count', type: 'number', hint: 'exactly this many' },
  { name: 'min_vram_gb', label: 'Min VRAM (GB)', type: 'number', step: 'any' },
  { name: 'max_price_per_gpu_hour', label: 'Max price per GPU hour (USD)', type: 'number', step: '0.01' },
  { name: 'min_cpus', label: 'Min CPUs', type: 'number' },
  { name: 'min_ram_gb', label: 'Min RAM (GB)', type: 'number', step: 'any' },
  { name: 'min_disk_gb', label: 'Min disk (GB)', type: 'number', step: 'any' },
  { name: 'min_download_mbps', label: 'Min download (Mbit/s)', type: 'number', step: 'any' },
  { name: 'min_ports', label: 'Min ports', type: 'number' },
  { name: 'country', label: 'Country', type: 'text', hint: 'ISO code, e.g. US' },
  { name: 'region', label: 'Region', type: 'text' },
  // its hint names the providers the server enables (GET /v1/providers)
  { name: 'provider', label: 'Provider', type: 'text' },
  { name: 'extra_filters', label: 'Extra filters', type: 'text', hint: 'key=value pairs, comma-separated (also !=, >=, <=, >, <)' },
];
const FLAG_FILTERS: { name: string; label: string }[] = [
  { name: 'docker_in_docker', label: 'Docker in Docker' },
  { name: 'mig', label: 'MIG' },
  { name: 'baremetal', label: 'Bare metal' },
  { name: 'virtualized', label: 'Virtualized' },
];
const ALL_FILTERS = [...TEXT_FILTERS.map((f) => f.name), ...FLAG_FILTERS.map((f) => f.name), 'limit'];

type SortKey = 'gpu_type' | 'gpu_count' | 'vram_gb' | 'price_per_gpu_hour_cents' | 'price_per_hour_cents' | 'cpus' | 'ram_gb' | 'disk_gb' | 'download_mbps' | 'provider' | 'available';
const COLUMNS: { key: SortKey; label: string; numeric?: boolean }[] = [
  { key: 'gpu_type', label: 'GPU' },
  { key: 'gpu_count', label: 'Count', numeric: true },
  { key: 'vram_gb', label: 'VRAM GB', numeric: true },
  { key: 'price_per_gpu_hour_cents', label: 'Per GPU hour', numeric: true },
  { key: 'price_per_hour_cents', label: 'Per hour', numeric: true },
  { key: 'cpus', label: 'CPUs', numeric: true },
  { key: 'ram_gb', label: 'RAM GB', numeric: true },
  { key: 'disk_gb', label: 'Disk GB', numeric: true },
  { key: 'download_mbps', label: 'Down Mbit/s', numeric: true },
  { key: 'provider', label: 'Provider' },
  { key: 'available', label: 'Available', numeric: true },
];

export function MarketPage({ signedIn }: { signedIn: boolean }) {
  return (
    <section>
      <h1>Market</h1>
      {signedIn ? <Search /> : <Summary />}
    </section>
  );
}

function Summary() {
  const summary = useLoad(() => run(api().GET('/v1/market/summary')));
  return (
    <>
      <p>
        GPUs from every provider, at one price list. <a href={`${BASE}/sign-in`}>Sign in</a> or <a href={`${BASE}/sign-up`}>create an account</a> to search every offer and rent.
      </p>
      {summary.loading && <Loading what="the market" />}
      <ErrorText error={summary.error} />
      {summary.data && (
        <>
          <p>
            {count(summary.data.gpus_available, 'GPU')} available on {count(summary.data.machines, 'machine')}, as of {when(summary.data.updated_at)}
            {summary.data.stale && ' (an older snapshot: the last refresh failed)'}. Renting is {summary.data.rentals_open ? 'open' : 'closed'}.
          </p>
          <ul class="cards">
            {summary.data.families.map((f) => (
              <li class="card" key={f.gpu_type}>
                <h2>{f.gpu_type}</h2>
                <p class="big">
                  from {usd(f.min_price_per_gpu_hour_cents)}
                  <small> per GPU hour</small>
                </p>
                <p>
                  {count(f.available_gpus, 'GPU')} on {count(f.machines, 'machine')} · up to {f.max_vram_gb} GB VRAM
                </p>
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

function filtersFromUrl(): Record<string, string> {
  const query = new URLSearchParams(location.search);
  return Object.fromEntries(ALL_FILTERS.map((name) => [name, query.get(name) ?? '']));
}

function Search() {
  const [filters, setFilters] = useState<Record<string, string>>(filtersFromUrl);
  const [applied, setApplied] = useState<Record<string, string>>(filters);
  const [result, setResult] = useState<GpuSearch | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(true);
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'price_per_gpu_hour_cents', desc: false });

  useEffect(() => {
    let live = true;
    setBusy(true);
    void run(api().GET('/v1/gpus', { params: { query: searchQuery(applied) } })).then((answer) => {
      if (!live) return;
      setBusy(false);
      setError(answer.error ?? null);
      if (answer.data) setResult(answer.data);
    });
    return () => void (live = false);
  }, [applied]);
  useEffect(() => {
    if (result && !busy) performance.mark('market-interactive');
  }, [result, busy]);

  const submit = (event: Event) => {
    event.preventDefault();
    const kept = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== ''));
    history.replaceState(null, '', `${BASE}/market${Object.keys(kept).length ? `?${new URLSearchParams(kept)}` : ''}`);
    setApplied({ ...filters });
  };
  const clear = () => {
    const empty = Object.fromEntries(ALL_FILTERS.map((n) => [n, '']));
    setFilters(empty);
    history.replaceState(null, '', `${BASE}/market`);
    setApplied(empty);
  };
  const set = (name: string) => (value: string) => setFilters((f) => ({ ...f, [name]: value }));
  const providers = useLoad(() => run(api().GET('/v1/providers')));
  const hintOf = (f: (typeof TEXT_FILTERS)[number]) => (f.name === 'provider' && providers.data ? `one of ${providers.data.providers.map((p) => p.name).join(', ')}` : f.hint);
  const nodes = result ? sorted(result.nodes, sort.key, sort.desc) : [];

  return (
    <>
      <form class="filters" onSubmit={submit} aria-label="Search filters">
        <div class="grid">
          {TEXT_FILTERS.map((f) => (
            <Field key={f.name} label={f.label} hint={hintOf(f) ? `${f.name}: ${hintOf(f)}` : f.name}>
              {(id, hintId) => (
                <input id={id} name={f.name} aria-describedby={hintId} type={f.type as 'text'} step={f.step} min={f.type === 'number' ? '0' : undefined} inputMode={f.type === 'number' ? 'decimal' : undefined} value={filters[f.name]} onInput={(e) => set(f.name)((e.target as HTMLInputElement).value)} />
              )}
            </Field>
          ))}
          {FLAG_FILTERS.map((f) => (
            <Field key={f.name} label={f.label} hint={f.name}>
              {(id, hintId) => (
                <select id={id} name={f.name} aria-describedby={hintId} value={filters[f.name]} onChange={(e) => set(f.name)((e.target as HTMLSelectElement).value)}>
                  <option value="">Any</option>
                  <option value="true">Yes</option>
                  <option value="false">No</option>
                </select>
              )}
            </Field>
          ))}
          <Field label="How many" hint="limit: cheapest first">
            {(id, hintId) => (
              <select id={id} name="limit" aria-describedby={hintId} value={filters.limit} onChange={(e) => set('limit')((e.target as HTMLSelectElement).value)}>
                <option value="">100</option>
                <option value="300">300</option>
                <option value="1000">1000</option>
              </select>
            )}
          </Field>
        </div>
        <div class="actions">
          <Busy busy={busy}>Search</Busy>
          <button type="button" class="secondary" onClick={clear}>
            Clear filters
          </button>
        </div>
      </form>
      <ErrorText error={error} />
      {applied.gpu_type && <PriceHistory gpuType={applied.gpu_type} provider={applied.provider || null} />}
      {result && (
        <>
          <Providers result={result} />
          <p role="status" aria-live="polite">
            {busy ? 'Searching…' : `${result.total} matching nodes${result.total > result.nodes.length ? `, the ${result.nodes.length} cheapest shown` : ''}.`}
            {!result.rentals_open && ' Renting is closed right now.'}
          </p>
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Matching nodes">
            <table class="nodes">
              <thead>
                <tr>
                  {COLUMNS.map((c) => (
                    <th key={c.key} scope="col" aria-sort={sort.key === c.key ? (sort.desc ? 'descending' : 'ascending') : 'none'} class={c.numeric ? 'num' : ''}>
                      <button type="button" class="sort" onClick={() => setSort((s) => ({ key: c.key, desc: s.key === c.key ? !s.desc : false }))}>
                        {c.label}
                        <span aria-hidden="true">{sort.key === c.key ? (sort.desc ? ' ▼' : ' ▲') : ''}</span>
                      </button>
                    </th>
                  ))}
                  <th scope="col">Where</th>
                  <th scope="col">
                    <span class="visually-hidden">Rent</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {nodes.map((n) => (
                  <tr key={n.id}>
                    <td>
                      {n.gpu_type} <small>{n.gpu_model}</small>
                    </td>
                    <td class="num">{n.gpu_count}</td>
                    <td class="num">{n.vram_gb}</td>
                    <td class="num">
                      {usd(n.price_per_gpu_hour_cents)}
                      {!n.price_verified && <small title="not verified by the provider"> (unverified)</small>}
                    </td>
                    <td class="num">{usd(n.price_per_hour_cents)}</td>
                    <td class="num">{n.cpus}</td>
                    <td class="num">{n.ram_gb}</td>
                    <td class="num">{n.disk_gb}</td>
                    <td class="num">{n.download_mbps ?? '—'}</td>
                    <td>{n.provider}</td>
                    <td class="num">{n.available}</td>
                    <td>{[n.country, n.region].filter(Boolean).join(' · ') || '—'}</td>
                    <td>
                      <a
                        class="button small"
                        href={`${BASE}/rent/${encodeURIComponent(n.id)}`}
                        aria-label={`Rent ${n.gpu_count}× ${n.gpu_type} at ${usd(n.price_per_hour_cents)} per hour from ${n.provider}`}
                        onClick={() => void pickedNodes.set(n.id, n)}
                      >
                        Rent
                      </a>
                      {n.supported_operations.includes('spot') && n.spot_price_per_gpu_hour_cents !== null && (
                        <>
                          {' '}
                          <a
                            class="button small secondary"
                            href={`${BASE}/spot-claims?node=${encodeURIComponent(n.id)}`}
                            aria-label={`Claim spot ${n.gpu_count}× ${n.gpu_type} from ${n.provider}, now ${usd(n.spot_price_per_gpu_hour_cents)} per GPU hour`}
                            onClick={() => void pickedNodes.set(n.id, n)}
                          >
                            Claim spot
                          </a>
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      {!result && busy && <Loading what="offers" />}
    </>
  );
}

/** The chosen GPU type's price history: a week by hour, or 90 days by day. */
function PriceHistory({ gpuType, provider }: { gpuType: string; provider: string | null }) {
  const [by, setBy] = useState<'hour' | 'day'>('hour');
  const history = useLoad(
    () => run(api().GET('/v1/market/history', { params: { query: { gpu_type: gpuType, granularity: by, ...(provider && { provider }) } } })),
    [gpuType, provider, by],
  );
  const points = history.data?.points ?? [];
  const lows = points.map((p) => p.min_price_per_gpu_hour_cents);
  return (
    <section class="price-history" aria-labelledby="price-history-title">
      <h2 id="price-history-title">Price history: {history.data?.gpu_type ?? gpuType}</h2>
      <div class="actions">
        <button type="button" class={by === 'hour' ? '' : 'secondary'} aria-pressed={by === 'hour'} onClick={() => setBy('hour')}>
          Last 7 days by hour
        </button>
        <button type="button" class={by === 'day' ? '' : 'secondary'} aria-pressed={by === 'day'} onClick={() => setBy('day')}>
          Last 90 days by day
        </button>
      </div>
      <ErrorText error={history.error} />
      {history.data && (
        <p class="history-summary">
          {points.length === 0
            ? 'No prices recorded for it yet.'
            : `Lowest verified price per GPU hour over these ${points.length} points: from ${usd(Math.min(...lows))} to ${usd(Math.max(...lows))}.`}
        </p>
      )}
      {points.length > 0 && (
        <Suspense fallback={<Loading what="the chart" />}>
          <PriceChart points={points} />
        </Suspense>
      )}
    </section>
  );
}

function Providers({ result }: { result: GpuSearch }) {
  return (
    <div class="providers">
      <h2>Providers</h2>
      <ul>
        {result.providers.map((p) => (
          <li key={p.provider}>
            <strong>{p.provider}</strong>: {p.status === 'ok' ? `${p.count} matching` : <span class="error-inline">error: {p.error}</span>}
            {p.snapshot_age_seconds !== null && <small> · prices {p.snapshot_age_seconds} s old</small>}
            {p.ignored_filters.length > 0 && <span> · ignored filters: {p.ignored_filters.join(', ')}</span>}
          </li>
        ))}
      </ul>
      {result.ignored_filters.length > 0 && <p>Filters no provider applied: {result.ignored_filters.join(', ')}</p>}
    </div>
  );
}

type SearchQuery = operations['searchGpus']['parameters']['query'];

/** The form's text as the API's typed query: numbers and flags parsed, empty fields left out. */
function searchQuery(filters: Record<string, string>): SearchQuery {
  const query: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(filters)) {
    if (value === '') continue;
    const numeric = TEXT_FILTERS.find((f) => f.name === name)?.type === 'number' || name === 'limit';
    query[name] = FLAG_FILTERS.some((f) => f.name === name) ? value === 'true' : numeric ? Number(value) : value;
  }
  return query as SearchQuery;
}

function sorted(nodes: Node[], key: SortKey, desc: boolean): Node[] {
  const copy = [...nodes];
  copy.sort((a, b) => {
    const x = a[key];
    const y = b[key];
    const order = x === null ? 1 : y === null ? -1 : typeof x === 'string' ? x.localeCompare(y as string) : (x as number) - (y as number);
    return desc ? -order : order;
  });
  return copy;
}
