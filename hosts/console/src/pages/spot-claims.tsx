import { useEffect, useState } from 'preact/hooks';
import { api, run, type ApiError } from '../api.ts';
import { Busy, Confirm, ErrorText, Field, Input, Loading, TemplateSelect, Time, useLoad, useTick } from '../components.tsx';
import { centsOfDollars, count, DOLLARS, dollarsText, usd } from '../format.ts';
import { BASE } from '../router.ts';
import type { Node, SpotClaim, SshKey, Template } from '../types.ts';
import { findNode } from './rent.tsx';

const ENDED = new Set(['released', 'expired']);
const POLL_MS = 10_000;

/**
 * Spot claims: interruptible capacity at a bid, rented by the sweep and rented again after each preemption. From
 * the market (`?node=`) the form starts from that node, its GPU count and its spot price now.
 */
export function SpotClaimsPage({ nodeId }: { nodeId: string | null }) {
  const list = useLoad(() => run(api().GET('/v1/spot-claims')));
  const now = useTick(30_000);
  // the sweep rents within a minute and the provider may take a machine back: read again while the page is seen
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void list.reload();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, []);
  return (
    <section>
      <h1>Spot claims</h1>
      <p>
        A claim rents interruptible machines at or under your bid per GPU-hour, at the spot price of the moment, and rents another one each time the provider takes its
        machine back, until its hours end or you release it. Nodes that offer spot are marked <em>Claim spot</em> on the <a href={`${BASE}/market`}>market</a>.
      </p>
      <ErrorText error={list.error} />
      {list.loading && !list.data && <Loading what="spot claims" />}
      {list.data?.length === 0 && <p>No spot claims yet.</p>}
      {!!list.data?.length && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Spot claims">
          <table class="spot-claims">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Bid per GPU-hour
                </th>
                <th scope="col" class="num">
                  GPUs
                </th>
                <th scope="col" class="num">
                  Preemptions
                </th>
                <th scope="col" class="num">
                  Charged
                </th>
                <th scope="col">Ends</th>
                <th scope="col">Instance</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((c) => (
                <ClaimRow key={c.id} claim={c} now={now} reload={list.reload} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <CreateClaim nodeId={nodeId} created={list.reload} />
    </section>
  );
}

function ClaimRow({ claim: c, now, reload }: { claim: SpotClaim; now: number; reload: () => Promise<void> }) {
  return (
    <tr>
      <td>{c.name}</td>
      <td>
        <span class={`status status-${c.status}`}>{c.status}</span>
        {c.last_error && <small> ({c.last_error})</small>}
      </td>
      <td class="num">{usd(c.bid_cents_per_gpu_hour)}</td>
      <td class="num">{c.gpu_count}</td>
      <td class="num">{c.preemptions}</td>
      <td class="num">{usd(c.charged_cents)}</td>
      <td>{c.ends_at ? <Time iso={c.ends_at} now={now} /> : 'when released'}</td>
      <td>{c.instance_id ? <a href={`${BASE}/instances?instance=${encodeURIComponent(c.instance_id)}`}>{c.instance_id}</a> : '—'}</td>
      <td>
        {!ENDED.has(c.status) && (
          <Confirm
            small
            danger
            label="Release"
            title={`Release ${c.name}?`}
            confirmLabel="Release"
            run={async () => {
              const answer = await run(api().DELETE('/v1/spot-claims/{claim_id}', { params: { path: { claim_id: c.id } } }));
              await reload();
              return answer.error ?? null;
            }}
          >
            <p>
              {c.instance_id && c.status === 'active' ? 'Its machine is terminated and the unused minutes refunded. ' : 'No machine is rented for it any more. '}
              Your token's spend cap keeps only what it spent ({usd(c.charged_cents)}).
            </p>
          </Confirm>
        )}
      </td>
    </tr>
  );
}

function CreateClaim({ nodeId, created }: { nodeId: string | null; created: () => Promise<void> }) {
  const [node, setNode] = useState<Node | null>(null);
  const [nodeError, setNodeError] = useState<ApiError | null>(null);
  const [keys, setKeys] = useState<SshKey[]>([]);
  const [templates, setTemplates] = useState<Template[]>([]);

  const [name, setName] = useState('');
  const [target, setTarget] = useState(nodeId ?? '');
  const [gpuType, setGpuType] = useState('');
  const [bid, setBid] = useState('');
  const [gpus, setGpus] = useState('1');
  const [hours, setHours] = useState('');
  const [keyId, setKeyId] = useState('');
  const [templateId, setTemplateId] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | string | null>(null);

  useEffect(() => {
    void run(api().GET('/v1/ssh-keys')).then((r) => {
      if (!r.data) return;
      setKeys(r.data);
      if (r.data[0]) setKeyId(r.data[0].id);
    });
    void run(api().GET('/v1/templates')).then((r) => r.data && setTemplates(r.data));
  }, []);
  useEffect(() => {
    if (!nodeId) return;
    void findNode(nodeId).then((r) => {
      if (!r.data) return setNodeError(r.error ?? null);
      const n = r.data;
      setNode(n);
      setTarget(n.id);
      setGpus(String(n.gpu_count));
      setName((v) => v || `spot ${n.gpu_count}x ${n.gpu_type}`);
      if (n.spot_price_per_gpu_hour_cents !== null) setBid(dollarsText(n.spot_price_per_gpu_hour_cents));
    });
  }, [nodeId]);

  const bidCents = DOLLARS.test(bid.trim()) ? centsOfDollars(bid.trim()) : null;
  const gpuCount = /^[1-9]\d*$/.test(gpus) ? Number(gpus) : null;
  const hoursNumber = /^[1-9]\d*$/.test(hours) ? Number(hours) : null;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!target.trim() && !gpuType.trim()) return setError('Give a node id from the market, or a GPU type to claim the cheapest spot offer of.');
    setBusy(true);
    setError(null);
    const answer = await run(
      api().POST('/v1/spot-claims', {
        body: {
          name: name.trim(),
          ...(target.trim() ? { node_id: target.trim() } : { search: { gpu_type: gpuType.trim() } }),
          max_price_per_gpu_hour: bid.trim(),
          gpu_count: gpuCount ?? Number(gpus),
          ...(hours.trim() && { hours: hoursNumber ?? Number(hours) }),
          ...(keyId && { ssh_key_id: keyId }),
          ...(templateId && { template_id: templateId }),
        },
      }),
    );
    setBusy(false);
    if (answer.error) return setError(answer.error);
    setName('');
    await created();
  };

  return (
    <form class="card" onSubmit={submit} aria-labelledby="claim-title">
      <h2 id="claim-title">Claim spot capacity</h2>
      <ErrorText error={nodeError} />
      {node && (
        <dl class="facts">
          <dt>Node</dt>
          <dd>
            {node.gpu_count}× {node.gpu_type} ({node.gpu_model}) at {node.provider}
            {node.region && ` · ${node.region}`}
          </dd>
          <dt>Spot price now</dt>
          <dd>{node.spot_price_per_gpu_hour_cents === null ? 'not stated' : `${usd(node.spot_price_per_gpu_hour_cents)} per GPU-hour`}</dd>
          <dt>On demand</dt>
          <dd>{usd(node.price_per_gpu_hour_cents)} per GPU-hour</dd>
        </dl>
      )}
      <Input label="Claim name" required value={name} onInput={setName} />
      <Input label="Node id" hint="node_id, from the market: tried first; when it is gone or over the bid, the cheapest spot offer of its GPU type and count" value={target} onInput={setTarget} />
      {!target.trim() && <Input label="GPU type" hint="search.gpu_type, when no node id: the cheapest spot offer of this GPU type" value={gpuType} onInput={setGpuType} />}
      <Input label="Bid per GPU-hour (USD)" hint="max_price_per_gpu_hour: never paid above it; a machine whose spot price rises over it is taken back" inputMode="decimal" required value={bid} onInput={setBid} />
      <Input label="GPU count" hint="gpu_count: the machine's exact number of GPUs" type="number" min="1" inputMode="numeric" required value={gpus} onInput={setGpus} />
      <Input label="Hours" hint="hours: the claim ends after them, its machine removed (empty: until you release it; required for a capped token)" type="number" min="1" inputMode="numeric" value={hours} onInput={setHours} />
      <Field label="SSH key" hint="installed on each machine">
        {(id, hintId) => (
          <select id={id} aria-describedby={hintId} value={keyId} onChange={(e) => setKeyId((e.target as HTMLSelectElement).value)}>
            {keys.map((k) => (
              <option key={k.id} value={k.id}>
                {k.name} ({k.fingerprint})
              </option>
            ))}
            <option value="">None</option>
          </select>
        )}
      </Field>
      <TemplateSelect hint="each machine is set up from it" templates={templates} value={templateId} onChange={setTemplateId} />
      <Commitment bidCents={bidCents} gpuCount={gpuCount} hours={hoursNumber} />
      <ErrorText error={error} />
      <Busy busy={busy}>Claim</Busy>
    </form>
  );
}

/** What the claim commits, said before the button: bid x gpu_count x hours held on the token's spend cap at once. */
function Commitment({ bidCents, gpuCount, hours }: { bidCents: number | null; gpuCount: number | null; hours: number | null }) {
  if (bidCents === null || gpuCount === null) return <p class="charge" id="spot-commitment">Give a bid and a GPU count to see what the claim commits.</p>;
  const perHour = bidCents * gpuCount;
  return (
    <p class="charge" id="spot-commitment">
      Charged now: <strong>nothing</strong>. At most <strong>{usd(perHour)} per hour</strong> ({usd(bidCents)} × {count(gpuCount, 'GPU')}), paid by the started minute at
      the spot price of the moment once a machine is rented (within a minute).{' '}
      {hours !== null ? (
        <>
          Held on your token's spend cap now: <strong>{usd(perHour * hours)}</strong> ({usd(bidCents)} × {count(gpuCount, 'GPU')} × {count(hours, 'hour')}); released, it keeps
          only what was spent.
        </>
      ) : (
        <>No hours: it runs until you release it.</>
      )}
    </p>
  );
}
