import { Migration0001TenantsAndTokens } from './0001-tenants-and-tokens.ts';

/** Every migration, in order. A new one is a new file here and one line below. */
export const migrations = [{ name: '0001-tenants-and-tokens', class: Migration0001TenantsAndTokens }];
