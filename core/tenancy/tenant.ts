export interface Tenant {
  id: string;
  name: string;
  createdAt: Date;
}

/** The one-time secret that lets a new tenant mint its first token. Only its digest is kept. */
export interface BootstrapSecret {
  tenantId: string;
  digest: string;
  expiresAt: Date;
  usedAt: Date | null;
}

export const BOOTSTRAP_SECRET_LIFETIME_MS = 24 * 60 * 60 * 1000;
