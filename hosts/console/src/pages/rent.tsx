import { useEffect, useState } from 'preact/hooks';
import { api, run, type ApiError } from '../api.ts';
import { Busy, ErrorText, Field, Input, Loading, TemplateSelect } from '../components.tsx';
import { usd } from '../format.ts';
import { BASE, navigate } from '../router.ts';
import type { Node, SshKey, Template, Volume } from '../types.ts';
import { pickedNodes } from './market.tsx';

/** The node picked on the market page, or found again by a search (a reload, a shared link). */
export async function findNode(id: string): Promise<{ data?: Node; error?: ApiError }> {
  const known = pickedNodes.get(id);
  if (known) return { data: known };
  const answer = await run(api().GET('/v1/gpus', { params: { query: { limit: 1000 } } }));
  if (answer.error) return { error: answer.error };
  const node = answer.data.nodes.find((n) => n.id === id);
  return node ? { data: node } : { error: { status: 404, detail: 'This node is no longer on the market; pick another.' } };
}

export function RentPage({ nodeId }: { nodeId: string }) {
  const [node, setNode] = useState<Node | null>(null);
  const [loadError, setLoadError] = useState<ApiError | null>(null);
  const [keys, setKeys] = useState<SshKey[]>([]);
  const [templates, setTemplates] = useState<Template[]>([]);
  const [volumes, setVolumes] = useState<Volume[]>([]);

  const [name, setName] = useState('');
  const [hours, setHours] = useState('');
  const [keyId, setKeyId] = useState('');
  const [pastedKey, setPastedKey] = useState('');
  const [templateId, setTemplateId] = useState('');
  const [volumeIds, setVolumeIds] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  // one key per visit of this page: a retried click never rents twice
  const [idempotencyKey] = useState(() => crypto.randomUUID());

  useEffect(() => {
    void findNode(nodeId).then((r) => (r.data ? setNode(r.data) : setLoadError(r.error ?? null)));
    void run(api().GET('/v1/ssh-keys')).then((r) => {
      if (r.data) {
        setKeys(r.data);
        if (r.data[0]) setKeyId(r.data[0].id);
      }
    });
    void run(api().GET('/v1/templates')).then((r) => r.data && setTemplates(r.data));
    void run(api().GET('/v1/volumes')).then((r) => r.data && setVolumes(r.data));
  }, [nodeId]);

  if (loadError) {
    return (
      <section>
        <h1>Rent</h1>
        <ErrorText error={loadError} />
        <a href={`${BASE}/market`}>Back to the market</a>
      </section>
    );
  }
  if (!node) return <Loading what="the node" />;

  const usable = volumes.filter((v) => v.provider === node.provider && v.region === node.region && v.status === 'available');
  const hoursNumber = /^\d+$/.test(hours) ? Number(hours) : null;

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const answer = await run(
      api().POST('/v1/instances', {
        body: {
          node_id: node.id,
          idempotency_key: idempotencyKey,
          ...(name.trim() && { name: name.trim() }),
          ...(hoursNumber && { termination_hours: hoursNumber }),
          ...(keyId === 'paste' ? pastedKey.trim() && { ssh_public_key: pastedKey.trim() } : keyId && { ssh_key_id: keyId }),
          ...(templateId && { template_id: templateId }),
          ...(volumeIds.length > 0 && { volume_ids: volumeIds }),
        },
      }),
    );
    setBusy(false);
    if (answer.error) return setError(answer.error);
    // no dry_run is sent: the answer is the instance
    if ('id' in answer.data) navigate(`/instances?rented=${encodeURIComponent(answer.data.id)}`);
  };

  return (
    <section>
      <h1>
        Rent {node.gpu_count}× {node.gpu_type}
      </h1>
      <dl class="facts">
        <dt>GPU</dt>
        <dd>
          {node.gpu_model}, {node.vram_gb} GB each
        </dd>
        <dt>Machine</dt>
        <dd>
          {node.cpus} CPUs, {node.ram_gb} GB RAM, {node.disk_gb} GB disk{node.download_mbps !== null && `, ${node.download_mbps} Mbit/s down`}
        </dd>
        <dt>Where</dt>
        <dd>
          {node.provider}
          {node.region && ` · ${node.region}`}
          {node.country && ` · ${node.country}`}
        </dd>
        <dt>Hourly rate</dt>
        <dd>
          {usd(node.price_per_hour_cents)} per hour ({usd(node.price_per_gpu_hour_cents)} per GPU hour)
        </dd>
        <dt>Can</dt>
        <dd>{node.supported_operations.join(', ') || 'terminate'}</dd>
      </dl>
      <form onSubmit={submit}>
        <Input label="Name" hint="optional, to tell your machines apart" value={name} onInput={setName} />
        <Input
          label="Termination hours"
          hint="termination_hours: the machine stops by itself after this many hours (empty: runs until you stop it or funds run out)"
          type="number"
          min="1"
          inputMode="numeric"
          value={hours}
          onInput={setHours}
        />
        <Field label="SSH key" hint="the key the machine will accept">
          {(id, hintId) => (
            <select id={id} aria-describedby={hintId} value={keyId} onChange={(e) => setKeyId((e.target as HTMLSelectElement).value)}>
              {keys.map((k) => (
                <option key={k.id} value={k.id}>
                  {k.name} ({k.fingerprint})
                </option>
              ))}
              <option value="paste">Paste a public key</option>
              <option value="">None</option>
            </select>
          )}
        </Field>
        {keyId === 'paste' && (
          <Field label="Public key" hint="ssh-ed25519 AAAA… (not saved; save keys under Keys, images & more)">
            {(id, hintId) => <textarea id={id} aria-describedby={hintId} rows={3} value={pastedKey} onInput={(e) => setPastedKey((e.target as HTMLTextAreaElement).value)} />}
          </Field>
        )}
        <TemplateSelect hint="image, env, ports and startup script from a saved template" templates={templates} value={templateId} onChange={setTemplateId} />
        <fieldset>
          <legend>Volumes</legend>
          {usable.length === 0 && <p class="hint">No available volume at {node.provider} in {node.region ?? 'this region'}.</p>}
          {usable.map((v) => (
            <label key={v.id} class="check">
              <input
                type="checkbox"
                checked={volumeIds.includes(v.id)}
                onChange={(e) => setVolumeIds((ids) => ((e.target as HTMLInputElement).checked ? [...ids, v.id] : ids.filter((x) => x !== v.id)))}
              />
              {v.name} ({v.size_gb} GB)
            </label>
          ))}
        </fieldset>
        <p class="charge" id="charge-now">
          Charged now: <strong>{usd(node.price_per_hour_cents)}</strong> for the first hour. Then {usd(node.price_per_hour_cents)} per hour while it runs
          {hoursNumber ? `, at most ${usd(node.price_per_hour_cents * hoursNumber)} for ${hoursNumber} hours` : ''}; unused time after the first hour is refunded when you
          terminate it.
        </p>
        <ErrorText error={error} />
        <Busy busy={busy}>
          Rent for {usd(node.price_per_hour_cents)} now
        </Busy>
      </form>
      <Reserve node={node} name={name} keyId={keyId === 'paste' ? '' : keyId} templateId={templateId} />
    </section>
  );
}

/** The same node booked for a later window: quoted now, held on the token's cap, paid when the sweep starts it. */
function Reserve({ node, name, keyId, templateId }: { node: Node; name: string; keyId: string; templateId: string }) {
  const [startsAt, setStartsAt] = useState('');
  const [hours, setHours] = useState('2');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | string | null>(null);
  const [idempotencyKey] = useState(() => crypto.randomUUID());
  const hoursNumber = /^\d+$/.test(hours) ? Number(hours) : null;
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!startsAt || !hoursNumber) return setError('Pick when it starts and for how many whole hours.');
    setBusy(true);
    setError(null);
    const answer = await run(
      api().POST('/v1/reservations', {
        body: {
          node_id: node.id,
          name: name.trim() || `${node.gpu_count}x ${node.gpu_type}`,
          starts_at: new Date(startsAt).toISOString(),
          hours: hoursNumber,
          idempotency_key: idempotencyKey,
          ...(keyId && { ssh_key_id: keyId }),
          ...(templateId && { template_id: templateId }),
        },
      }),
    );
    setBusy(false);
    if (answer.error) return setError(answer.error);
    navigate('/library#reservations');
  };
  return (
    <details class="card">
      <summary>Reserve it for later instead</summary>
      <form onSubmit={submit}>
        <Input label="Starts at" hint="starts_at, in your time zone: from 5 minutes to 90 days ahead" type="datetime-local" value={startsAt} onInput={setStartsAt} />
        <Input label="Hours" hint="hours: the machine is removed when they end" type="number" min="1" inputMode="numeric" value={hours} onInput={setHours} />
        <p class="charge">
          Charged now: <strong>nothing</strong>.{' '}
          {hoursNumber ? `${usd(node.price_per_hour_cents * hoursNumber)} (${hoursNumber} hours at ${usd(node.price_per_hour_cents)}) is held on your token's spend cap; ` : ''}
          the machine is paid like a rental when it starts (the first hour then).
        </p>
        <ErrorText error={error} />
        <Busy busy={busy}>Reserve</Busy>
      </form>
    </details>
  );
}
