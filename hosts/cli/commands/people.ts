import { Argument, InvalidArgumentError, Option, type Command } from 'commander';
import type { Schema } from '../../client/api-client.ts';
import { connect, example, expectOk, note, optionsOf, print, printJson, withJson } from '../context.ts';
import { money, relative, table } from '../format.ts';
import { integer, usd } from '../parse.ts';

type Role = Schema<'IdentityOut'>['role'];
type Person = Schema<'IdentityOut'>;
type Token = Schema<'TokenOut'>;

/** The roles a person has in a tenant (docs/sign-in.md, "Roles"), in the API's order. */
const ROLES = ['owner', 'admin', 'member', 'billing', 'viewer'] as const satisfies readonly Role[];
const ROLE_HELP = 'owner and admin do everything (owners by owners only), a member reads and rents within its limits, billing reads and pays, a viewer reads';

/**
 * A limit that may be removed: "none" (sent as null, the API's "no limit"; commander turns a parsed null into ''),
 * anything else parsed as usual.
 */
const orNone =
  <T>(parse: (text: string) => T) =>
  (text: string): T | 'none' => {
    if (text.trim().toLowerCase() === 'none') return 'none';
    try {
      return parse(text);
    } catch (error) {
      throw new InvalidArgumentError(`${(error as Error).message}, or none`);
    }
  };

const personOf = (person: Person): string => person.email ?? person.login ?? `${person.provider} user`;

/** A member's limits as words; the other roles have none of their own. */
function limitsOf(item: { role: Role; spend_limit_cents: number | null; max_rental_hours: number | null }): string {
  if (item.role !== 'member') return '';
  const cap = item.spend_limit_cents === null ? 'no spend limit' : `spend limit ${money(item.spend_limit_cents)}`;
  const hours = item.max_rental_hours === null ? 'no rental length limit' : `rentals up to ${item.max_rental_hours} h`;
  return ` (${cap}, ${hours})`;
}

/** What linked a person in: the token named in GET /v1/tokens when the caller sees it, else its id. */
function linkedBy(person: Person, tokens: readonly Token[]): string {
  if (person.linked_by_token_id === null) return 'own sign-up or operator';
  const token = tokens.find((t) => t.id === person.linked_by_token_id);
  if (!token) return person.linked_by_token_id;
  const what = token.kind === 'session' ? 'a session' : `token "${token.name ?? token.id}"`;
  return `${token.id} (${what}${token.revoked_at ? ', ended since' : ''})`;
}

const memberLimit = (role: Role, value: number | null, show: (n: number) => string): string => (role === 'member' ? (value === null ? 'none' : show(value)) : '-');

export function registerPeople(program: Command): void {
  const people = example(
    program.command('people').description("The tenant's people: their roles and a member's limits, invitations, removal (changing people needs a root credential)"),
    'gpuctl people ls',
  );

  example(withJson(people.command('ls').description('The people who sign in to this tenant, oldest first: role, limits, who linked them')), 'gpuctl people ls').action(
    async (_options: unknown, command: Command) => {
      const session = connect(command);
      const [all, tokens] = await Promise.all([
        expectOk(session, session.client.GET('/v1/identities')),
        // only to name what linked each person; a caller who cannot list tokens sees their ids
        session.client.GET('/v1/tokens').then((answer) => answer.data ?? [], () => []),
      ]);
      if (optionsOf(command).json) return printJson(all);
      print(
        table(
          ['ID', 'PERSON', 'SIGNS IN WITH', 'ROLE', 'SPEND LIMIT', 'MAX HOURS', 'LINKED', 'LINKED BY'],
          all.map((p) => [
            p.id,
            personOf(p),
            p.provider,
            p.role,
            memberLimit(p.role, p.spend_limit_cents, money),
            memberLimit(p.role, p.max_rental_hours, String),
            relative(p.linked_at),
            linkedBy(p, tokens),
          ]),
          'nobody is linked to this tenant',
        ),
      );
    },
  );

  example(
    withJson(
      people
        .command('invite')
        .description('Invite an address with a role: a single-use code valid 7 days is mailed to it (never printed); they accept with `gpuctl people accept`')
        .argument('<email>', 'who is invited; only a session of this address accepts')
        .addOption(new Option('--role <role>', ROLE_HELP).choices(ROLES).makeOptionMandatory())
        .option('--spend-limit <usd>', "a member's cap on what they and every token they issue may commit", usd)
        .option('--max-hours <n>', "a member's longest rental", integer(1, 100_000)),
    ),
    'gpuctl people invite colleague@example.com --role member --spend-limit 50 --max-hours 24',
  ).action(async (email: string, _options: unknown, command: Command) => {
    const options = optionsOf<{ role: Role; spendLimit?: string; maxHours?: number }>(command);
    const session = connect(command);
    const made = await expectOk(
      session,
      session.client.POST('/v1/invitations', {
        body: {
          email,
          role: options.role,
          ...(options.spendLimit !== undefined && { spend_limit_usd: options.spendLimit }),
          ...(options.maxHours !== undefined && { max_rental_hours: options.maxHours }),
        },
      }),
    );
    if (!made.mailed) note(`warning: ${made.email} has had its share of mail for now: nothing was mailed. Revoke ${made.id} and invite again later.`);
    if (options.json) return printJson(made);
    const mailed = made.mailed ? `the code was mailed to ${made.email}` : 'no code was mailed';
    print(`Invited ${made.email} as ${made.role}${limitsOf(made)} (${made.id}): ${mailed}, valid until ${made.expires_at} (${relative(made.expires_at)})`);
  });

  example(withJson(people.command('invitations').description("This tenant's invitations, newest first, with their status")), 'gpuctl people invitations').action(
    async (_options: unknown, command: Command) => {
      const session = connect(command);
      const all = await expectOk(session, session.client.GET('/v1/invitations'));
      if (optionsOf(command).json) return printJson(all);
      print(
        table(
          ['ID', 'EMAIL', 'ROLE', 'SPEND LIMIT', 'MAX HOURS', 'STATUS', 'MAILED', 'EXPIRES', 'INVITED'],
          all.map((i) => [
            i.id,
            i.email,
            i.role,
            memberLimit(i.role, i.spend_limit_cents, money),
            memberLimit(i.role, i.max_rental_hours, String),
            i.status,
            i.mailed ? 'yes' : 'no',
            i.status === 'pending' ? relative(i.expires_at) : '-',
            relative(i.created_at),
          ]),
          'no invitations',
        ),
      );
    },
  );

  example(
    withJson(people.command('revoke-invitation').description('Revoke an invitation: its code stops working (an accepted one: remove the person instead)').argument('<id>', 'an invitation id (inv_...)')),
    'gpuctl people revoke-invitation inv_abc123',
  ).action(async (id: string, _options: unknown, command: Command) => {
    const session = connect(command);
    await expectOk(session, session.client.DELETE('/v1/invitations/{invitation_id}', { params: { path: { invitation_id: id } } }));
    // a 204 has no JSON to print: --json prints nothing, the exit status says it worked
    if (!optionsOf(command).json) print(`Revoked ${id}: its code no longer works`);
  });

  example(
    withJson(
      people
        .command('set-role')
        .description("Change a person's role or a member's limits: at once for their sessions and every token under them (only owners change owners)")
        .argument('<id>', 'a person id (idn_..., from `gpuctl people ls`)')
        .addArgument(new Argument('<role>', ROLE_HELP).choices(ROLES))
        .option('--spend-limit <usd>', "a member's spend limit, or none to remove it", orNone(usd))
        .option('--max-hours <n>', "a member's longest rental in hours, or none to remove it", orNone(integer(1, 100_000))),
    ),
    'gpuctl people set-role idn_abc123 member --spend-limit 50 --max-hours none',
  ).action(async (id: string, role: Role, _options: unknown, command: Command) => {
    const options = optionsOf<{ spendLimit?: string; maxHours?: number | 'none' }>(command);
    const session = connect(command);
    const changed = await expectOk(
      session,
      session.client.PATCH('/v1/identities/{identity_id}', {
        params: { path: { identity_id: id } },
        body: {
          role,
          ...(options.spendLimit !== undefined && { spend_limit_usd: options.spendLimit === 'none' ? null : options.spendLimit }),
          ...(options.maxHours !== undefined && { max_rental_hours: options.maxHours === 'none' ? null : options.maxHours }),
        },
      }),
    );
    if (options.json) return printJson(changed);
    print(`${personOf(changed)} (${changed.id}) is now ${changed.role}${limitsOf(changed)}`);
  });

  example(
    withJson(
      people
        .command('rm')
        .description('Remove a person from this tenant: their sessions here end at once, with every token and person under them (machines keep running)')
        .argument('<id>', 'a person id (idn_..., from `gpuctl people ls`)'),
    ),
    'gpuctl people rm idn_abc123',
  ).action(async (id: string, _options: unknown, command: Command) => {
    const session = connect(command);
    await expectOk(session, session.client.DELETE('/v1/identities/{identity_id}', { params: { path: { identity_id: id } } }));
    if (!optionsOf(command).json) print(`Removed ${id}: their sessions in this tenant ended, with every token under them`);
  });

  example(
    withJson(
      people
        .command('accept')
        .description('Accept an invitation with your signed-in session (the invited address): you join its tenant with its role')
        .argument('<code>', 'the code from the invitation mail (gcpinv_...)'),
    ),
    'gpuctl people accept gcpinv_9q4m2xk7c3rwh8vt2b6n',
  ).action(async (code: string, _options: unknown, command: Command) => {
    const session = connect(command);
    const joined = await expectOk(session, session.client.POST('/v1/invitations/accept', { body: { code } }));
    if (optionsOf(command).json) return printJson(joined);
    print(`Joined tenant ${joined.tenant_id} as ${joined.role}. Work there: gpuctl tenants switch ${joined.tenant_id}`);
  });
}
