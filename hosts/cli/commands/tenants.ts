import type { Command } from 'commander';
import { connect, example, expectOk, note, optionsOf, print, printJson, withJson } from '../context.ts';
import { relative, table } from '../format.ts';
import { profileName, saveProfile } from '../profiles.ts';

/** A person of several tenants (docs/sign-in.md, "Several tenants"): which ones, and a session in another. */
export function registerTenants(program: Command): void {
  const tenants = example(program.command('tenants').description('The tenants you belong to as a person, and switching between them (a signed-in session)'), 'gpuctl tenants ls');

  example(withJson(tenants.command('ls').description('Your tenants with your role in each, the first joined first; * marks the one in use')), 'gpuctl tenants ls').action(
    async (_options: unknown, command: Command) => {
      const session = connect(command);
      const all = await expectOk(session, session.client.GET('/v1/auth/tenants'));
      if (optionsOf(command).json) return printJson(all);
      print(table(['CURRENT', 'ID', 'NAME', 'ROLE'], all.map((t) => [t.current ? '*' : '', t.tenant_id, t.name, t.role])));
    },
  );

  example(
    withJson(
      tenants
        .command('switch')
        .description("Sign in to another of your tenants without the password again: the new session replaces the profile's (the old one stays valid)")
        .argument('<tenant_id>', 'a tenant of yours (ten_..., from `gpuctl tenants ls`)'),
    ),
    'gpuctl tenants switch ten_abc123',
  ).action(async (tenantId: string, _options: unknown, command: Command) => {
    const options = optionsOf(command);
    const session = connect(command);
    const switched = await expectOk(session, session.client.POST('/v1/auth/switch', { body: { tenant_id: tenantId } }));
    const name = profileName(options);
    // as login does; the session left behind is not revoked: the tokens it issued hang from it and would end with it
    const path = saveProfile(name, { url: session.connection.url, token: switched.token!, tenant_id: switched.tenant_id ?? tenantId, expires_at: switched.expires_at ?? null });
    if (session.connection.source === 'GPUCTL_TOKEN') note('warning: GPUCTL_TOKEN is set and wins over the profile: unset it to use the new session');
    if (options.json) return printJson(switched);
    print(`Switched to tenant ${switched.tenant_id}${switched.expires_at ? ` (session expires ${relative(switched.expires_at)})` : ''}; profile "${name}" saved in ${path}`);
  });
}
