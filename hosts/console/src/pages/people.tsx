import { useState } from 'preact/hooks';
import { api, run, type ApiError } from '../api.ts';
import { Busy, Confirm, ErrorText, Field, Input, Loading, Time, useLoad } from '../components.tsx';
import { DOLLARS, dollarsText, usd } from '../format.ts';
import { switchTenant, tenantsChanged } from '../tenants.tsx';
import type { Identity, Invitation, Role, Token, TokenSelf } from '../types.ts';

const PROVIDERS: Record<string, string> = { builtin: 'email and password', cognito: 'Cognito', github: 'GitHub' };

/** What each role may do (docs/sign-in.md, "Roles"), as the role pickers explain it. */
const ROLES: { role: Role; what: string }[] = [
  { role: 'owner', what: 'everything; only owners make or change owners' },
  { role: 'admin', what: 'everything but owners' },
  { role: 'member', what: 'read and rent, and tokens, keys and templates of its own, within its limits; not people nor webhooks' },
  { role: 'billing', what: 'read and billing' },
  { role: 'viewer', what: 'read' },
];

/** Who a person is, as the page names them: the address, else the GitHub login. */
const personOf = (person: Identity): string => person.email ?? person.login ?? `${person.provider} user`;

/** A member's limits in words; the other roles carry none of their own. */
function limitsOf(item: { role: Role; spend_limit_cents: number | null; max_rental_hours: number | null }): string {
  if (item.role !== 'member') return '—';
  const cap = item.spend_limit_cents === null ? 'no spend limit' : `${usd(item.spend_limit_cents)} spend limit`;
  const hours = item.max_rental_hours === null ? 'rentals of any length' : `rentals up to ${item.max_rental_hours} h`;
  return `${cap}, ${hours}`;
}

/** What linked a person in, by the token named in the list (a root session sees every token of the tenant). */
function linkedBy(person: Identity, tokens: readonly Token[] | undefined): string {
  if (person.linked_by_token_id === null) return 'their own sign-up, or an operator';
  const token = tokens?.find((t) => t.id === person.linked_by_token_id);
  if (!token) return `token ${person.linked_by_token_id}`;
  if (token.kind === 'session') return `a console session${token.revoked_at ? ' (signed out since)' : ''}`;
  return `token “${token.name ?? token.id}”${token.revoked_at ? ' (revoked since)' : ''}`;
}

/** The limits a member's fields hold, as the API takes them: empty is none (null). */
function limitsBody(spend: string, hours: string): { spend_limit_usd: string | null; max_rental_hours: number | null } | string {
  if (spend.trim() && (!DOLLARS.test(spend.trim()) || Number(spend) <= 0)) return 'The spend limit is dollars and cents above 0, e.g. 50 or 49.50 (empty: none).';
  if (hours.trim() && !/^[1-9]\d{0,5}$/.test(hours.trim())) return 'Max rental hours is a whole number of hours from 1 (empty: none).';
  return { spend_limit_usd: spend.trim() || null, max_rental_hours: hours.trim() ? Number(hours) : null };
}

/**
 * The tenant's people (docs/sign-in.md, "Roles" and "Invitations"): each one's role and a member's limits; a root
 * session (an owner's or admin's) changes and removes them and invites; anyone signed in accepts an invitation.
 */
export function PeoplePage() {
  const self = useLoad(() => run(api().GET('/v1/tokens/self')));
  const me = self.data;
  return (
    <section>
      <h1>People</h1>
      <p>
        Everyone listed signs in to this tenant with a role: an <strong>owner</strong> or <strong>admin</strong> does everything (only owners change owners), a{' '}
        <strong>member</strong> reads and rents within the limits set here, <strong>billing</strong> reads and pays, a <strong>viewer</strong> reads. A change
        applies at once to their sessions and every token under them. Someone you do not know? Remove them: their sessions here end at once, with every token
        those sessions issued.
      </p>
      <ErrorText error={self.error} />
      {self.loading && !me && <Loading what="your role" />}
      {/* people's addresses are the tenant's: a member's manage reaches only its own tokens, keys and templates */}
      {me && (me.tenant_manage ? <PeopleList me={me} /> : <p>As a {me.role ?? 'token'} here you do not see the tenant's people; an owner or admin does.</p>)}
      {me?.root && <Invitations me={me} />}
      {me && me.kind === 'session' && <AcceptInvitation />}
    </section>
  );
}

function PeopleList({ me }: { me: TokenSelf }) {
  const people = useLoad(() => run(api().GET('/v1/identities')));
  const tokens = useLoad(() => run(api().GET('/v1/tokens')));
  const reload = async () => {
    await Promise.all([people.reload(), tokens.reload()]);
  };
  return (
    <>
      {!me.root && <p>Only an owner or admin changes people. You are {me.role === 'admin' || me.role === 'owner' ? `an ${me.role}` : `a ${me.role ?? 'token'}`} here.</p>}
      <ErrorText error={people.error} />
      {people.loading && !people.data && <Loading what="people" />}
      {people.data && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="People">
          <table class="people">
            <thead>
              <tr>
                <th scope="col">Person</th>
                <th scope="col">Role</th>
                <th scope="col">Limits</th>
                <th scope="col">Signs in with</th>
                <th scope="col">Linked</th>
                <th scope="col">Linked by</th>
                {me.root && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {people.data.map((person) => (
                <tr key={person.id}>
                  <td>{personOf(person)}</td>
                  <td class="role">{person.role}</td>
                  <td>{limitsOf(person)}</td>
                  <td>{PROVIDERS[person.provider] ?? person.provider}</td>
                  <td>
                    <Time iso={person.linked_at} />
                  </td>
                  <td>{linkedBy(person, tokens.data)}</td>
                  {me.root && (
                    <td>
                      {person.role === 'owner' && me.role !== 'owner' ? (
                        <small>only an owner changes an owner</small>
                      ) : (
                        <div class="actions">
                          <ChangePerson person={person} me={me} reload={reload} />
                          <Confirm
                            small
                            danger
                            label="Remove"
                            name={`Remove ${personOf(person)}`}
                            title={`Remove ${personOf(person)}?`}
                            confirmLabel="Remove"
                            run={async () => {
                              const answer = await run(api().DELETE('/v1/identities/{identity_id}', { params: { path: { identity_id: person.id } } }));
                              if (!answer.error) await reload();
                              return answer.error ?? null;
                            }}
                          >
                            <p>
                              They can no longer sign in to this tenant. Their sessions here end at once, and so does every token those sessions issued.
                              Machines keep running.
                            </p>
                          </Confirm>
                        </div>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** A role picker: an admin is not offered owner (only owners make owners). */
function RoleSelect({ me, value, onChange }: { me: TokenSelf; value: Role; onChange: (role: Role) => void }) {
  return (
    <Field label="Role" hint={ROLES.find((r) => r.role === value)?.what ?? ''}>
      {(id, hintId) => (
        <select id={id} aria-describedby={hintId} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value as Role)}>
          {ROLES.filter((r) => r.role !== 'owner' || me.role === 'owner').map((r) => (
            <option key={r.role} value={r.role}>
              {r.role}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A member's two limits (empty: none). */
function LimitFields({ spend, setSpend, hours, setHours }: { spend: string; setSpend: (v: string) => void; hours: string; setHours: (v: string) => void }) {
  return (
    <>
      <Input label="Spend limit (USD)" hint="spend_limit_usd: what their sessions and every token those issue may commit together (empty: none)" inputMode="decimal" value={spend} onInput={setSpend} />
      <Input label="Max rental hours" hint="max_rental_hours: their longest rental (empty: none)" type="number" min="1" value={hours} onInput={setHours} />
    </>
  );
}

/** Change a person's role or a member's limits, in a dialog; the API's detail shows there when it refuses. */
function ChangePerson({ person, me, reload }: { person: Identity; me: TokenSelf; reload: () => Promise<void> }) {
  const [role, setRole] = useState<Role>(person.role);
  const [spend, setSpend] = useState(person.spend_limit_cents === null ? '' : dollarsText(person.spend_limit_cents));
  const [hours, setHours] = useState(person.max_rental_hours === null ? '' : String(person.max_rental_hours));
  return (
    <Confirm
      small
      label="Change"
      name={`Change ${personOf(person)}`}
      title={`Change ${personOf(person)}`}
      confirmLabel="Save"
      run={async (): Promise<ApiError | null> => {
        let limits = {};
        if (role === 'member') {
          const body = limitsBody(spend, hours);
          if (typeof body === 'string') return { status: 0, detail: body };
          limits = body;
        }
        const answer = await run(api().PATCH('/v1/identities/{identity_id}', { params: { path: { identity_id: person.id } }, body: { role, ...limits } }));
        if (!answer.error) await reload();
        return answer.error ?? null;
      }}
    >
      <p>Applies at once to their sessions and every token under them: what the new role does not hold ends.</p>
      <RoleSelect me={me} value={role} onChange={setRole} />
      {role === 'member' && <LimitFields spend={spend} setSpend={setSpend} hours={hours} setHours={setHours} />}
    </Confirm>
  );
}

/** Inviting by address, and the tenant's invitations (root only). */
function Invitations({ me }: { me: TokenSelf }) {
  const invitations = useLoad(() => run(api().GET('/v1/invitations')));
  return (
    <>
      <InviteForm me={me} onInvited={invitations.reload} />
      <h2>Invitations</h2>
      <ErrorText error={invitations.error} />
      {invitations.loading && !invitations.data && <Loading what="invitations" />}
      {invitations.data && invitations.data.length === 0 && <p>No invitations yet.</p>}
      {invitations.data && invitations.data.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Invitations">
          <table class="invitations">
            <thead>
              <tr>
                <th scope="col">Address</th>
                <th scope="col">Role</th>
                <th scope="col">Limits</th>
                <th scope="col">Status</th>
                <th scope="col">Expires</th>
                <th scope="col">Invited</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {invitations.data.map((invitation) => (
                <InvitationRow key={invitation.id} invitation={invitation} reload={invitations.reload} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function InvitationRow({ invitation, reload }: { invitation: Invitation; reload: () => Promise<void> }) {
  return (
    <tr>
      <td>{invitation.email}</td>
      <td>{invitation.role}</td>
      <td>{limitsOf(invitation)}</td>
      <td>
        <span class="status">{invitation.status}</span>
        {!invitation.mailed && <small> (not mailed: invite again later)</small>}
      </td>
      <td>{invitation.status === 'pending' ? <Time iso={invitation.expires_at} /> : '—'}</td>
      <td>
        <Time iso={invitation.created_at} />
      </td>
      <td>
        {invitation.status === 'pending' && (
          <Confirm
            small
            danger
            label="Revoke"
            name={`Revoke the invitation of ${invitation.email}`}
            title={`Revoke the invitation of ${invitation.email}?`}
            confirmLabel="Revoke"
            run={async () => {
              const answer = await run(api().DELETE('/v1/invitations/{invitation_id}', { params: { path: { invitation_id: invitation.id } } }));
              await reload();
              return answer.error ?? null;
            }}
          >
            <p>Its code stops working.</p>
          </Confirm>
        )}
      </td>
    </tr>
  );
}

function InviteForm({ me, onInvited }: { me: TokenSelf; onInvited: () => Promise<void> }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [spend, setSpend] = useState('');
  const [hours, setHours] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setDone(null);
    const limits = role === 'member' ? limitsBody(spend, hours) : { spend_limit_usd: null, max_rental_hours: null };
    if (typeof limits === 'string') return setError(limits);
    // the invitation carries only the limits that are set: none is the default
    const body = {
      email: email.trim(),
      role,
      ...(limits.spend_limit_usd !== null && { spend_limit_usd: limits.spend_limit_usd }),
      ...(limits.max_rental_hours !== null && { max_rental_hours: limits.max_rental_hours }),
    };
    setBusy(true);
    setError(null);
    const answer = await run(api().POST('/v1/invitations', { body }));
    setBusy(false);
    if (answer.error) return setError(answer.error);
    setDone(
      answer.data.mailed
        ? `Invited ${answer.data.email} as ${answer.data.role}: the code was mailed to them, valid 7 days.`
        : `Invited ${answer.data.email}, but nothing was mailed: the address has had its share of mail for now. Revoke it and invite again later.`,
    );
    setEmail('');
    setSpend('');
    setHours('');
    await onInvited();
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <p>A single-use code, valid 7 days, is mailed to the address. They sign in with that address (signing up first if they have no account) and accept it here.</p>
      <Input label="Email" type="email" autocomplete="off" required value={email} onInput={setEmail} />
      <RoleSelect me={me} value={role} onChange={setRole} />
      {role === 'member' && <LimitFields spend={spend} setSpend={setSpend} hours={hours} setHours={setHours} />}
      <ErrorText error={error} />
      {done && <p role="status">{done}</p>}
      <Busy busy={busy}>Invite</Busy>
    </form>
  );
}

/** Any signed-in person accepts an invitation mailed to their address, then may switch to that tenant. */
function AcceptInvitation() {
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [joined, setJoined] = useState<{ tenant_id: string; role: Role } | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setJoined(null);
    const answer = await run(api().POST('/v1/invitations/accept', { body: { code: code.trim() } }));
    setBusy(false);
    if (answer.error) return setError(answer.error);
    setJoined(answer.data);
    setCode('');
    tenantsChanged();
  };
  const go = async () => {
    if (!joined) return;
    const self = await run(api().GET('/v1/tokens/self'));
    if (self.error) return setError(self.error);
    const failed = await switchTenant(joined.tenant_id, self.data.tenant_id);
    if (failed) setError(failed);
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="accept-title">
      <h2 id="accept-title">Accept an invitation</h2>
      <p>Invited to another tenant? Enter the code from the mail; it works only for the address you signed in with.</p>
      <Input label="Invitation code" hint="gcpinv_… from the invitation mail" autocomplete="off" required value={code} onInput={setCode} />
      <ErrorText error={error} />
      {joined && (
        <p role="status">
          You joined tenant {joined.tenant_id} as {joined.role}.{' '}
          <button type="button" class="secondary small" onClick={go}>
            Switch to it
          </button>
        </p>
      )}
      <Busy busy={busy}>Accept invitation</Busy>
    </form>
  );
}
