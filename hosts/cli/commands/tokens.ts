import type { Command } from 'commander';
import type { Schema } from '../../client/api-client.ts';
import { connect, example, expectOk, optionsOf, print, printJson, withJson } from '../context.ts';
import { money, relative, table } from '../format.ts';
import { integer, list, minutes, moment, usd } from '../parse.ts';

type Scope = Schema<'TokenOut'>['scopes'][number];

export function registerTokens(program: Command): void {
  const tokens = example(program.command('tokens').description('API tokens: list, create (with scopes and caps), revoke'), 'gpuctl tokens ls');

  example(withJson(tokens.command('ls').description('The tokens this token administers, oldest first')), 'gpuctl tokens ls').action(async (_options: unknown, command: Command) => {
    const session = connect(command);
    const all = await expectOk(session, session.client.GET('/v1/tokens'));
    if (optionsOf(command).json) return printJson(all);
    print(
      table(
        ['ID', 'NAME', 'KIND', 'SCOPES', 'CAP', 'COMMITTED', 'MAX HOURS', 'BURN/H', 'EXPIRES', 'IDLE DEADLINE', 'CREATED', 'REVOKED'],
        all.map((t) => [
          t.id,
          t.name,
          t.kind,
          t.scopes.join(','),
          t.spend_limit_cents === null ? 'none' : money(t.spend_limit_cents),
          money(t.committed_cents),
          t.max_rental_hours,
          t.max_burn_cents_per_hour === null ? money(t.burn_cents_per_hour) : `${money(t.burn_cents_per_hour)} of ${money(t.max_burn_cents_per_hour)}`,
          t.expires_at ? relative(t.expires_at) : 'never',
          t.idle_deadline_at ? `${relative(t.idle_deadline_at)} (${t.idle_timeout_minutes}m idle)` : 'none',
          relative(t.created_at),
          relative(t.revoked_at),
        ]),
      ),
    );
  });

  example(
    withJson(
      tokens
        .command('create')
        .description('Issue a token: its secret is printed once')
        .option('--name <name>', 'what it is for')
        .option('--scopes <list>', 'comma separated: read, rent, manage, billing (default read)', list)
        .option('--spend-limit <usd>', 'cap on what rentals through it may commit', usd)
        .option('--max-hours <n>', 'longest rental it may make', integer(1, 100_000))
        .option('--max-burn <usd>', 'most its live machines and volumes may cost together an hour, USD', usd)
        .option('--expires <time>', 'ISO 8601 or a span from now (30d, 12h)')
        .option('--idle-timeout <span>', 'dead-man switch: 30m, 2h, or 45 (minutes), 5m to 24h; silent that long, its machines are terminated', minutes(5, 1440)),
    ),
    'gpuctl tokens create --name agent --scopes read,rent --spend-limit 25 --max-hours 8 --max-burn 5 --expires 30d --idle-timeout 30m',
  ).action(async (_options: unknown, command: Command) => {
    const options = optionsOf<{ name?: string; scopes?: string[]; spendLimit?: string; maxHours?: number; maxBurn?: string; expires?: string; idleTimeout?: number }>(command);
    const session = connect(command);
    const created = await expectOk(
      session,
      session.client.POST('/v1/tokens', {
        body: {
          ...(options.name && { name: options.name }),
          ...(options.scopes && { scopes: options.scopes as Scope[] }),
          ...(options.spendLimit && { spend_limit_usd: options.spendLimit }),
          ...(options.maxHours && { max_rental_hours: options.maxHours }),
          ...(options.maxBurn && { max_burn_usd_per_hour: options.maxBurn }),
          ...(options.expires && { expires_at: moment(options.expires) }),
          ...(options.idleTimeout && { idle_timeout_minutes: options.idleTimeout }),
        },
      }),
    );
    if (options.json) return printJson(created);
    const idle = created.idle_timeout_minutes === null ? '' : `, times out after ${created.idle_timeout_minutes} idle minutes`;
    const burn = created.max_burn_cents_per_hour === null ? '' : `, at most ${money(created.max_burn_cents_per_hour)} an hour`;
    print(`Created ${created.id} (${created.scopes.join(', ')}${created.spend_limit_cents === null ? '' : `, cap ${money(created.spend_limit_cents)}`}${burn}${idle}). Its secret, shown once:\n${created.token}`);
  });

  example(withJson(tokens.command('revoke').description('Revoke a token and every token it issued').argument('<id>', 'a token id (tok_...)')), 'gpuctl tokens revoke tok_abc123').action(
    async (id: string, _options: unknown, command: Command) => {
      const session = connect(command);
      await expectOk(session, session.client.DELETE('/v1/tokens/{token_id}', { params: { path: { token_id: id } } }));
      // a 204 has no JSON to print: --json prints nothing, the exit status says it worked
      if (!optionsOf(command).json) print(`Revoked ${id}`);
    },
  );
}
