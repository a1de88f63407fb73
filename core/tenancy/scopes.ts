export const SCOPES = ['read', 'rent', 'manage', 'billing'] as const;
export type Scope = (typeof SCOPES)[number];

export const DEFAULT_SCOPES: readonly Scope[] = ['read'];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

export const missingScopes = (held: readonly Scope[], wanted: readonly Scope[]): Scope[] =>
  wanted.filter((scope) => !held.includes(scope));

/** Scopes in their canonical order, without repeats. */
export const normaliseScopes = (scopes: readonly Scope[]): Scope[] => SCOPES.filter((s) => scopes.includes(s));
