/**
 * What each tag of the route table groups, for the document's global `tags` (linters and API references
 * list operations under them). A route with a tag missing here still gets a plain description, and
 * test/api/openapi.test.ts names the tag to describe.
 */
export const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  meta: 'Liveness, readiness, metrics and this document.',
  tenants: 'A tenant is an account: its tokens, machines and balance. Creating one answers a single-use bootstrap secret.',
  tokens: 'API tokens: scopes (read, rent, manage, billing), spend caps, maximum rental hours, expiry; a token issues children within its own limits.',
  market: 'Search the GPU machines of every enabled provider, cheapest first, and the market at a glance.',
  instances: 'Rentals: rent a node, follow it, reboot, schedule its removal, terminate it. The first hour is charged at once.',
  'ssh-keys': 'Saved OpenSSH public keys, installed on machines at rental.',
  images: 'Saved container images (with private-registry credentials) that machines run.',
  templates: 'Saved rental settings: image, keys, environment, ports, startup script, volumes and a market search.',
  volumes: 'Persistent volumes at providers that have them, billed per started hour.',
  reservations: 'A machine booked for a window ahead: quoted now, rented by the sweep at its start.',
  'spot-claims': 'Interruptible capacity at a bid, rented again after each preemption until released or expired.',
  billing: 'The prepaid balance in integer cents: account figures, ledger, summaries, bank-transfer deposits, card checkouts, auto-recharge, emergency stop.',
  payments: "The embedded card processor's checkout page (when Stripe is not configured).",
  metering: 'Usage of metered kinds (METERED_PRICES) reported by the tenant, priced exactly and settled from the balance.',
  webhooks: 'Endpoints that receive signed event deliveries (Standard Webhooks), and their attempts.',
  operator: "The operator's back office: accounts, deposits, credits, holds, the sweep, invitations. Needs an operator key.",
  identities: 'The people of a tenant: who signs in to it, what linked them in, and removing one (their sessions end with what they issued).',
  'sign-in': 'Email accounts: sign up, confirm, sign in, reset a password. Every sign-in answers a 30-day console session.',
  auth: "Sign-in through an identity provider: the built-in provider's hosted page (OAuth 2 code with PKCE) and GitHub's device flow.",
};

export const tagDescription = (tag: string): string => TAG_DESCRIPTIONS[tag] ?? `Operations on ${tag}.`;
