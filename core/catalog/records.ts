import type { SearchTerms } from '../market/search-terms.ts';

/** A tenant's saved SSH public key. The fingerprint is unique per tenant: one key material is saved once. */
export interface SshKey {
  id: string;
  tenantId: string;
  name: string;
  /** The canonical line: `type base64 [comment]`. */
  publicKey: string;
  keyType: string;
  fingerprint: string;
  /** The token that saved it (core/tenancy/acts-on.ts); null: saved before migration 0040, so only root changes it. */
  tokenId: string | null;
  createdAt: Date;
}

/** A tenant's container image. The registry password is kept sealed (SecretBox); only the core opens it, to rent. */
export interface Image {
  id: string;
  tenantId: string;
  name: string;
  /** A container reference (registry/namespace/name:tag@digest). */
  image: string;
  registryUsername: string | null;
  /** The registry password sealed under the server's secrets key, the image id as associated data. */
  registryPasswordSealed: string | null;
  command: string | null;
  /** The token that saved it (core/tenancy/acts-on.ts); null: saved before migration 0040, so only root changes it. */
  tokenId: string | null;
  createdAt: Date;
}

/** GET /v1/gpus filters as a template keeps them: filter name -> value (read by core/market/search-terms.ts). */
export type TemplateSearch = SearchTerms;

/** A saved rental: what POST /v1/instances would be sent, less the node. */
export interface Template {
  id: string;
  tenantId: string;
  name: string;
  /** One of the tenant's images, or a container reference given directly (`image`), or neither. */
  imageId: string | null;
  image: string | null;
  sshKeyIds: string[];
  env: Record<string, string>;
  ports: number[];
  startupScript: string | null;
  terminationHours: number | null;
  /** `vol_` ids; whether they exist, and where, is checked when a machine is rented with them. */
  volumeIds: string[];
  search: TemplateSearch;
  /** The token that saved it (core/tenancy/acts-on.ts); null: saved before migration 0040, so only root changes it. */
  tokenId: string | null;
  createdAt: Date;
}
