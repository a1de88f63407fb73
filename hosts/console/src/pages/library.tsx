import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, run, type ApiError, type Result } from '../api.ts';
import { Busy, Confirm, ErrorText, Field, Input, Loading, Time, useLoad } from '../components.tsx';
import { usd } from '../format.ts';

/** What rentals are made from: SSH keys, images, templates, volumes; and reservations (spot claims have their own page). */
export function LibraryPage() {
  // a key or image added above is offered at once by the template form below
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
  useEffect(() => {
    if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
  }, []);
  return (
    <section>
      <h1>Keys, images &amp; more</h1>
      <nav aria-label="Sections" class="inline-nav">
        <a href="#ssh-keys">SSH keys</a> · <a href="#images">Images</a> · <a href="#templates">Templates</a> · <a href="#volumes">Volumes</a> · <a href="#reservations">Reservations</a>
      </nav>
      <SshKeys changed={changed} />
      <Images changed={changed} />
      <Templates version={version} />
      <Volumes />
      <Reservations />
    </section>
  );
}

function Part<T>(props: { id: string; title: string; list: { data?: T[]; error?: ApiError; loading: boolean }; empty: string; row: (item: T) => ComponentChildren; head: string[]; form?: ComponentChildren }) {
  return (
    <section id={props.id} aria-labelledby={`${props.id}-title`} class="part">
      <h2 id={`${props.id}-title`}>{props.title}</h2>
      <ErrorText error={props.list.error} />
      {props.list.loading && !props.list.data && <Loading what={props.title.toLowerCase()} />}
      {props.list.data?.length === 0 && <p>{props.empty}</p>}
      {!!props.list.data?.length && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label={props.title}>
          <table>
            <thead>
              <tr>
                {props.head.map((h) => (
                  <th scope="col" key={h}>
                    {h || <span class="visually-hidden">Actions</span>}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>{props.list.data.map(props.row)}</tbody>
          </table>
        </div>
      )}
      {props.form}
    </section>
  );
}

function Remove({ what, remove, reload, label = 'Delete', body }: { what: string; remove: () => Promise<Result<unknown>>; reload: () => Promise<void>; label?: string; body?: string }) {
  return (
    <Confirm
      small
      danger
      label={label}
      title={`${label} ${what}?`}
      confirmLabel={label}
      run={async () => {
        const answer = await remove();
        await reload();
        return answer.error ?? null;
      }}
    >
      <p>{body ?? 'This cannot be undone.'}</p>
    </Confirm>
  );
}

/** A small create form's request: busy while it runs, the API's detail when it fails, the list reloaded when done. */
function useCreate(reload: () => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const create = async (request: () => Promise<Result<unknown>>, reset: () => void) => {
    setBusy(true);
    setError(null);
    const answer = await request();
    setBusy(false);
    if (answer.error) return setError(answer.error);
    reset();
    await reload();
  };
  return { busy, error, create };
}

function SshKeys({ changed }: { changed: () => void }) {
  const list = useLoad(() => run(api().GET('/v1/ssh-keys')));
  const reload = async () => {
    await list.reload();
    changed();
  };
  const [name, setName] = useState('');
  const [key, setKey] = useState('');
  const { busy, error, create } = useCreate(reload);
  return (
    <Part
      id="ssh-keys"
      title="SSH keys"
      list={list}
      empty="No saved keys."
      head={['Name', 'Fingerprint', 'Added', '']}
      row={(k) => (
        <tr key={k.id}>
          <td>{k.name}</td>
          <td>
            <code>{k.fingerprint}</code>
          </td>
          <td>
            <Time iso={k.created_at} />
          </td>
          <td>
            <Remove what={`key ${k.name}`} remove={() => run(api().DELETE('/v1/ssh-keys/{key_id}', { params: { path: { key_id: k.id } } }))} reload={reload} body="Machines already running keep it." />
          </td>
        </tr>
      )}
      form={
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            void create(() => run(api().POST('/v1/ssh-keys', { body: { name, public_key: key.trim() } })), () => (setName(''), setKey('')));
          }}
        >
          <h3>Add a key</h3>
          <Input label="Key name" required value={name} onInput={setName} />
          <Field label="Public key" hint="ed25519, ECDSA or RSA of 2048 bits or more, as in ~/.ssh/id_ed25519.pub">
            {(id, hintId) => <textarea id={id} aria-describedby={hintId} rows={3} required value={key} onInput={(e) => setKey((e.target as HTMLTextAreaElement).value)} />}
          </Field>
          <ErrorText error={error} />
          <Busy busy={busy}>Save key</Busy>
        </form>
      }
    />
  );
}

function Images({ changed }: { changed: () => void }) {
  const list = useLoad(() => run(api().GET('/v1/images')));
  const reload = async () => {
    await list.reload();
    changed();
  };
  const [name, setName] = useState('');
  const [image, setImage] = useState('');
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, create } = useCreate(reload);
  return (
    <Part
      id="images"
      title="Images"
      list={list}
      empty="No saved images."
      head={['Name', 'Image', 'Registry login', '']}
      row={(i) => (
        <tr key={i.id}>
          <td>{i.name}</td>
          <td>
            <code>{i.image}</code>
          </td>
          <td>{i.registry_username ? `${i.registry_username}${i.has_registry_password ? ' (password saved)' : ''}` : '—'}</td>
          <td>
            <Remove what={`image ${i.name}`} remove={() => run(api().DELETE('/v1/images/{image_id}', { params: { path: { image_id: i.id } } }))} reload={reload} />
          </td>
        </tr>
      )}
      form={
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            void create(() => run(api().POST('/v1/images', { body: { name, image, ...(user && { registry_username: user }), ...(password && { registry_password: password }) } })), () => (setName(''), setImage(''), setUser(''), setPassword('')));
          }}
        >
          <h3>Add an image</h3>
          <Input label="Image name" required value={name} onInput={setName} />
          <Input label="Image" hint="e.g. pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime" required value={image} onInput={setImage} />
          <Input label="Registry username" hint="optional, for a private registry" autocomplete="off" value={user} onInput={setUser} />
          <Input label="Registry password" hint="kept encrypted, never shown again" type="password" autocomplete="new-password" value={password} onInput={setPassword} />
          <ErrorText error={error} />
          <Busy busy={busy}>Save image</Busy>
        </form>
      }
    />
  );
}

function Templates({ version }: { version: number }) {
  const list = useLoad(() => run(api().GET('/v1/templates')));
  const images = useLoad(() => run(api().GET('/v1/images')), [version]);
  const keys = useLoad(() => run(api().GET('/v1/ssh-keys')), [version]);
  const [name, setName] = useState('');
  const [imageId, setImageId] = useState('');
  const [keyId, setKeyId] = useState('');
  const [hours, setHours] = useState('');
  const [env, setEnv] = useState('');
  const [ports, setPorts] = useState('');
  const [script, setScript] = useState('');
  const [formError, setFormError] = useState<string | null>(null);
  const { busy, error, create } = useCreate(list.reload);
  const submit = () => {
    const parsedEnv = envOf(env);
    const parsedPorts = portsOf(ports);
    if (typeof parsedEnv === 'string') return setFormError(parsedEnv);
    if (typeof parsedPorts === 'string') return setFormError(parsedPorts);
    setFormError(null);
    void create(
      () =>
        run(
          api().POST('/v1/templates', {
            body: {
              name,
              ...(imageId && { image_id: imageId }),
              ...(keyId && { ssh_key_ids: [keyId] }),
              ...(hours && { termination_hours: Number(hours) }),
              ...(Object.keys(parsedEnv).length > 0 && { env: parsedEnv }),
              ...(parsedPorts.length > 0 && { ports: parsedPorts }),
              ...(script.trim() && { startup_script: script }),
            },
          }),
        ),
      () => (setName(''), setImageId(''), setKeyId(''), setHours(''), setEnv(''), setPorts(''), setScript('')),
    );
  };
  return (
    <Part
      id="templates"
      title="Templates"
      list={list}
      empty="No templates."
      head={['Name', 'Image', 'Ports', 'Environment', 'Termination hours', '']}
      row={(t) => (
        <tr key={t.id}>
          <td>{t.name}</td>
          <td>{t.image ?? '—'}</td>
          <td>{t.ports.join(', ') || '—'}</td>
          <td>{Object.keys(t.env).join(', ') || '—'}</td>
          <td>{t.termination_hours ?? '—'}</td>
          <td>
            <Remove what={`template ${t.name}`} remove={() => run(api().DELETE('/v1/templates/{template_id}', { params: { path: { template_id: t.id } } }))} reload={list.reload} body="Machines rented from it are not touched." />
          </td>
        </tr>
      )}
      form={
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <h3>Add a template</h3>
          <Input label="Template name" required value={name} onInput={setName} />
          <Field label="Image">
            {(id) => (
              <select id={id} value={imageId} onChange={(e) => setImageId((e.target as HTMLSelectElement).value)}>
                <option value="">None</option>
                {images.data?.map((i) => (
                  <option key={i.id} value={i.id}>
                    {i.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Template SSH key">
            {(id) => (
              <select id={id} value={keyId} onChange={(e) => setKeyId((e.target as HTMLSelectElement).value)}>
                <option value="">None</option>
                {keys.data?.map((k) => (
                  <option key={k.id} value={k.id}>
                    {k.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Input label="Template termination hours" type="number" min="1" value={hours} onInput={setHours} />
          <Field label="Environment" hint="one KEY=value a line">
            {(id, hintId) => <textarea id={id} aria-describedby={hintId} rows={3} value={env} onInput={(e) => setEnv((e.target as HTMLTextAreaElement).value)} />}
          </Field>
          <Input label="Ports" hint="container ports to expose, e.g. 8888, 6006" value={ports} onInput={setPorts} />
          <Field label="Startup script" hint="run once the machine is up">
            {(id, hintId) => <textarea id={id} aria-describedby={hintId} rows={4} value={script} onInput={(e) => setScript((e.target as HTMLTextAreaElement).value)} />}
          </Field>
          <ErrorText error={formError} />
          <ErrorText error={error} />
          <Busy busy={busy}>Save template</Busy>
        </form>
      }
    />
  );
}

function Volumes() {
  const list = useLoad(() => run(api().GET('/v1/volumes')));
  const [name, setName] = useState('');
  const [size, setSize] = useState('50');
  // the providers that host volumes (GET /v1/providers): the first is the default, all are named in the hint
  const hosts = useLoad(() => run(api().GET('/v1/providers'))).data?.providers.filter((p) => p.volumes).map((p) => p.name);
  const [chosen, setProvider] = useState<string | null>(null);
  const provider = chosen ?? hosts?.[0] ?? '';
  const [region, setRegion] = useState('');
  const [hours, setHours] = useState('');
  const { busy, error, create } = useCreate(list.reload);
  return (
    <Part
      id="volumes"
      title="Volumes"
      list={list}
      empty="No volumes."
      head={['Name', 'Size', 'Where', 'Status', 'Price', 'Deleted at', '']}
      row={(v) => (
        <tr key={v.id}>
          <td>{v.name}</td>
          <td>{v.size_gb} GB</td>
          <td>
            {v.provider} · {v.region}
          </td>
          <td>{v.status}</td>
          <td>{usd(v.price_per_gb_month_cents)} per GB-month</td>
          <td>{v.ends_at ? <Time iso={v.ends_at} /> : 'when you delete it'}</td>
          <td>
            <Remove what={`volume ${v.name}`} remove={() => run(api().DELETE('/v1/volumes/{volume_id}', { params: { path: { volume_id: v.id } } }))} reload={list.reload} body="Its data is gone; storage is billed up to now." />
          </td>
        </tr>
      )}
      form={
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            const body = { name, size_gb: Number(size), provider, region, ...(hours && { hours: Number(hours) }) };
            void create(() => run(api().POST('/v1/volumes', { body })), () => setName(''));
          }}
        >
          <h3>Make a volume</h3>
          <Input label="Volume name" required value={name} onInput={setName} />
          <Input label="Size (GB)" type="number" min="1" required value={size} onInput={setSize} />
          <Input label="Volume provider" hint={hosts ? (hosts.length > 0 ? `with volumes here: ${hosts.join(', ')}` : 'no provider here has volumes') : undefined} required value={provider} onInput={setProvider} />
          <Input label="Volume region" hint="the region of the machines that will use it" required value={region} onInput={setRegion} />
          <Input label="Volume hours" type="number" min="1" hint="deleted when they end; required with a capped token" value={hours} onInput={setHours} />
          <ErrorText error={error} />
          <Busy busy={busy}>Make volume</Busy>
        </form>
      }
    />
  );
}

function Reservations() {
  const list = useLoad(() => run(api().GET('/v1/reservations')));
  const [name, setName] = useState('');
  const [nodeId, setNodeId] = useState('');
  const [startsAt, setStartsAt] = useState('');
  const [hours, setHours] = useState('1');
  const { busy, error, create } = useCreate(list.reload);
  return (
    <Part
      id="reservations"
      title="Reservations"
      list={list}
      empty="No reservations."
      head={['Starts', 'Hours', 'Status', 'Rate', 'Instance', '']}
      row={(r) => (
        <tr key={r.id}>
          <td>
            <Time iso={r.starts_at} />
          </td>
          <td>{r.hours}</td>
          <td>
            {r.status}
            {r.failure && <small> ({r.failure})</small>}
          </td>
          <td>{usd(r.rate_cents_per_hour)} per hour</td>
          <td>{r.instance_id ?? '—'}</td>
          <td>
            {(r.status === 'scheduled' || r.status === 'active') && (
              <Remove what="this reservation" label="Cancel" remove={() => run(api().DELETE('/v1/reservations/{reservation_id}', { params: { path: { reservation_id: r.id } } }))} reload={list.reload} body="Before its start it costs nothing; during it, the machine is terminated with the usual refund." />
            )}
          </td>
        </tr>
      )}
      form={
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            void create(() => run(api().POST('/v1/reservations', { body: { name, node_id: nodeId.trim(), starts_at: startsAt ? new Date(startsAt).toISOString() : '', hours: Number(hours) } })), () => setName(''));
          }}
        >
          <h3>Reserve a node</h3>
          <Input label="Reservation name" required value={name} onInput={setName} />
          <Input label="Node id" hint="node_id, from the market" required value={nodeId} onInput={setNodeId} />
          <Input label="Starts at" hint="starts_at, in your time zone" type="datetime-local" required value={startsAt} onInput={setStartsAt} />
          <Input label="Hours" type="number" min="1" required value={hours} onInput={setHours} />
          <ErrorText error={error} />
          <Busy busy={busy}>Reserve</Busy>
        </form>
      }
    />
  );
}

/** "KEY=value" lines as the API's env object, or what is wrong with them. */
function envOf(text: string): Record<string, string> | string {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const at = line.indexOf('=');
    if (at <= 0) return `"${line.trim()}" is not KEY=value`;
    env[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return env;
}

/** "8888, 6006" as port numbers, or what is wrong with them. */
function portsOf(text: string): number[] | string {
  const ports: number[] = [];
  for (const part of text.split(/[\s,]+/)) {
    if (!part) continue;
    if (!/^\d{1,5}$/.test(part)) return `"${part}" is not a port number`;
    ports.push(Number(part));
  }
  return ports;
}
