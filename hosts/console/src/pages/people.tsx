import { api, run } from '../api.ts';
import { Confirm, ErrorText, Loading, Time, useLoad } from '../components.tsx';
import type { Identity, Token } from '../types.ts';

const PROVIDERS: Record<string, string> = { builtin: 'email and password', cognito: 'Cognito', github: 'GitHub' };

/** Who a person is, as the page names them: the address, else the GitHub login. */
const personOf = (person: Identity): string => person.email ?? person.login ?? `${person.provider} user`;

/** What linked a person in, by the token named in the list (a root token sees every token of the tenant). */
function linkedBy(person: Identity, tokens: readonly Token[] | undefined): string {
  if (person.linked_by_token_id === null) return 'their own sign-up, or an invitation';
  const token = tokens?.find((t) => t.id === person.linked_by_token_id);
  if (!token) return `token ${person.linked_by_token_id}`;
  if (token.kind === 'session') return `a console session${token.revoked_at ? ' (signed out since)' : ''}`;
  return `token “${token.name ?? token.id}”${token.revoked_at ? ' (revoked since)' : ''}`;
}

/**
 * The tenant's people: everyone who signs in to it (each with every scope), what linked them in, and a remove
 * button that ends their sessions with every token those issued.
 */
export function PeoplePage() {
  const people = useLoad(() => run(api().GET('/v1/identities')));
  const tokens = useLoad(() => run(api().GET('/v1/tokens')));
  return (
    <section>
      <h1>People</h1>
      <p>
        Everyone listed signs in to this tenant, with every scope and no spend cap. Someone you do not know? Remove them: their sessions here end at
        once, with every token those sessions issued.
      </p>
      <ErrorText error={people.error} />
      {people.loading && !people.data && <Loading what="people" />}
      {people.data && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="People">
          <table class="people">
            <thead>
              <tr>
                <th scope="col">Person</th>
                <th scope="col">Signs in with</th>
                <th scope="col">Linked</th>
                <th scope="col">Linked by</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {people.data.map((person) => (
                <tr key={person.id}>
                  <td>{personOf(person)}</td>
                  <td>{PROVIDERS[person.provider] ?? person.provider}</td>
                  <td>
                    <Time iso={person.linked_at} />
                  </td>
                  <td>{linkedBy(person, tokens.data)}</td>
                  <td>
                    <Confirm
                      small
                      danger
                      label="Remove"
                      name={`Remove ${personOf(person)}`}
                      title={`Remove ${personOf(person)}?`}
                      confirmLabel="Remove"
                      run={async () => {
                        const answer = await run(api().DELETE('/v1/identities/{identity_id}', { params: { path: { identity_id: person.id } } }));
                        if (!answer.error) await Promise.all([people.reload(), tokens.reload()]);
                        return answer.error ?? null;
                      }}
                    >
                      <p>
                        They can no longer sign in to this tenant. Their sessions here end at once, and so does every token those sessions issued. Machines
                        keep running.
                      </p>
                    </Confirm>
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
