import { useEffect, useState } from 'preact/hooks';
import { api, run, type ApiError } from '../api.ts';
import { Confirm, CopyButton, ErrorText, Loading, Time, useTick } from '../components.tsx';
import { usd } from '../format.ts';
import { BASE } from '../router.ts';
import type { Instance } from '../types.ts';

const POLL_MS = 3_000;
const DONE = new Set(['terminated', 'failed']);
const CHANGING = new Set(['provisioning', 'rebooting', 'terminating']);

/** The instances, polled while the page is open and visible: status changes show without a reload. */
export function InstancesPage({ focus = null }: { focus?: string | null }) {
  const [instances, setInstances] = useState<Instance[] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [showEnded, setShowEnded] = useState(false);
  const now = useTick(30_000);
  const load = async () => {
    const answer = await run(api().GET('/v1/instances'));
    setError(answer.error ?? null);
    if (!answer.data) return;
    // the list answers what is stored; one instance's GET asks the provider how a changing machine is doing
    const fresh = await Promise.all(
      answer.data.map(async (i) => (CHANGING.has(i.status) ? ((await run(api().GET('/v1/instances/{instance_id}', { params: { path: { instance_id: i.id } } }))).data ?? i) : i)),
    );
    setInstances(fresh);
  };
  useEffect(() => {
    void load();
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void load();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, []);
  // a link to one instance (`?instance=`, from a spot claim): shown even when ended, scrolled to once
  const [focused, setFocused] = useState(false);
  useEffect(() => {
    const target = focus && instances?.find((i) => i.id === focus);
    if (!target || focused) return;
    if (DONE.has(target.status)) setShowEnded(true);
    setFocused(true);
    requestAnimationFrame(() => document.getElementById(`${target.id}-name`)?.scrollIntoView());
  }, [instances, focus]);

  const act = async (call: Promise<{ error?: ApiError }>) => {
    const answer = await call;
    await load();
    return answer.error ?? null;
  };
  const shown = instances?.filter((i) => showEnded || !DONE.has(i.status)) ?? [];
  return (
    <section>
      <h1>Instances</h1>
      <ErrorText error={error} />
      {!instances && !error && <Loading what="instances" />}
      {instances && (
        <>
          <label class="check">
            <input type="checkbox" checked={showEnded} onChange={(e) => setShowEnded((e.target as HTMLInputElement).checked)} /> Show terminated and failed ({instances.filter((i) => DONE.has(i.status)).length})
          </label>
          {shown.length === 0 && (
            <p>
              No machines running. <a href={`${BASE}/market`}>Find one on the market</a>.
            </p>
          )}
          <ul class="instances">
            {shown.map((i) => (
              <li key={i.id} class={`card instance${i.id === focus ? ' highlight' : ''}`} aria-labelledby={`${i.id}-name`}>
                <h2 id={`${i.id}-name`}>
                  {i.name ?? i.id} <span class={`status status-${i.status}`}>{i.status}</span>
                </h2>
                <dl class="facts">
                  <dt>Machine</dt>
                  <dd>
                    {i.gpu_count}× {i.gpu_type} at {i.provider}
                    {i.image && ` · ${i.image}`}
                  </dd>
                  <dt>Rate</dt>
                  <dd>{usd(i.rate_cents_per_hour)} per hour</dd>
                  <dt>Charged so far</dt>
                  <dd>{usd(i.charged_cents)}</dd>
                  <dt>Started</dt>
                  <dd>
                    <Time iso={i.started_at ?? i.created_at} now={now} />
                  </dd>
                  <dt>Paid until</dt>
                  <dd>
                    <Time iso={i.paid_until} now={now} />
                  </dd>
                  {i.window_ends_at && (
                    <>
                      <dt>Stops by itself</dt>
                      <dd>
                        <Time iso={i.window_ends_at} now={now} />
                      </dd>
                    </>
                  )}
                  {i.removal_scheduled_at && (
                    <>
                      <dt>Removal scheduled</dt>
                      <dd>
                        <Time iso={i.removal_scheduled_at} now={now} />
                      </dd>
                    </>
                  )}
                  {i.terminated_at && (
                    <>
                      <dt>Terminated</dt>
                      <dd>
                        <Time iso={i.terminated_at} now={now} />
                      </dd>
                    </>
                  )}
                  {i.failure && (
                    <>
                      <dt>Failure</dt>
                      <dd>{i.failure}</dd>
                    </>
                  )}
                  {i.recovery && (
                    <>
                      <dt>Recovery</dt>
                      <dd>
                        {i.recovery.attempts_left} of {i.recovery.max_attempts} replacements left{i.recovery.failure && `; ${i.recovery.failure}`}
                      </dd>
                    </>
                  )}
                  {i.replaces && (
                    <>
                      <dt>Replaces</dt>
                      <dd>{i.replaces}</dd>
                    </>
                  )}
                  {i.replaced_by && (
                    <>
                      <dt>Replaced by</dt>
                      <dd>{i.replaced_by}</dd>
                    </>
                  )}
                </dl>
                {i.status === 'provisioning' && (
                  <p role="status">
                    <span class="spinner" aria-hidden="true" /> Starting; this page updates by itself.
                  </p>
                )}
                {i.ssh_host && i.ssh_port !== null && !DONE.has(i.status) && <SshCommand instance={i} />}
                {!DONE.has(i.status) && i.status !== 'terminating' && <Actions instance={i} act={act} />}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/** The login the instance states (`ssh_user`, from its provider); without one, ssh picks its own default user. */
function SshCommand({ instance }: { instance: Instance }) {
  const command = `ssh -p ${instance.ssh_port} ${instance.ssh_user ? `${instance.ssh_user}@` : ''}${instance.ssh_host}`;
  return (
    <p class="ssh">
      <code>{command}</code> <CopyButton text={command} label={`Copy the ssh command of ${instance.name ?? instance.id}`} />
    </p>
  );
}

function Actions({ instance: i, act }: { instance: Instance; act: (call: Promise<{ error?: ApiError }>) => Promise<ApiError | null> }) {
  const [at, setAt] = useState('');
  const path = { params: { path: { instance_id: i.id } } };
  const label = i.name ?? i.id;
  return (
    <div class="actions">
      <Confirm label="Terminate" title={`Terminate ${label}?`} confirmLabel="Terminate" danger run={() => act(run(api().POST('/v1/instances/{instance_id}/terminate', path)))}>
        <p>The machine stops and its disk is deleted (volumes are kept). Unused time after the first hour is refunded.</p>
      </Confirm>
      {i.supported_operations.includes('reboot') && i.status === 'running' && (
        <Confirm label="Reboot" title={`Reboot ${label}?`} confirmLabel="Reboot" run={() => act(run(api().POST('/v1/instances/{instance_id}/reboot', path)))}>
          <p>Running programs are stopped; the machine comes back with the same disk.</p>
        </Confirm>
      )}
      {i.supported_operations.includes('schedule_removal') &&
        (i.removal_scheduled_at ? (
          <Confirm label="Cancel scheduled removal" title={`Keep ${label}?`} confirmLabel="Cancel the removal" run={() => act(run(api().DELETE('/v1/instances/{instance_id}/schedule-removal', path)))}>
            <p>The machine keeps running until you terminate it.</p>
          </Confirm>
        ) : (
          <Confirm
            label="Schedule removal"
            title={`Schedule the removal of ${label}`}
            confirmLabel="Schedule"
            run={async () => (at ? act(run(api().POST('/v1/instances/{instance_id}/schedule-removal', { ...path, body: { removal_scheduled_at: new Date(at).toISOString() } }))) : { status: 0, detail: 'Pick a date and time.' })}
          >
            <label for={`${i.id}-at`}>Remove at (your time zone, {Intl.DateTimeFormat().resolvedOptions().timeZone})</label>
            <input id={`${i.id}-at`} type="datetime-local" value={at} onInput={(e) => setAt((e.target as HTMLInputElement).value)} />
            <p class="hint">The last block is charged pro rata.</p>
          </Confirm>
        ))}
    </div>
  );
}
