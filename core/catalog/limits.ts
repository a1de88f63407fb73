/** Bounds of the catalog's records (SSH keys, images, templates): one place for the core, the schemas and the docs. */
export const CATALOG_LIMITS = {
  /** Names of keys, images and templates, in characters. */
  name: 200,
  /** One OpenSSH public key line (an RSA 16384-bit key is about 2,800 characters). */
  publicKey: 16_384,
  /** RSA moduli accepted, in bits. */
  rsaMinBits: 2_048,
  rsaMaxBits: 16_384,
  /** A container reference: a repository name of at most 255 characters, a tag, a digest. */
  imageReference: 512,
  registryUsername: 256,
  /** Registry passwords and tokens (cloud registries' tokens run to a few kB). */
  registryPassword: 16_384,
  command: 4_096,
  envEntries: 100,
  envName: 256,
  /** Bytes of UTF-8 per environment value. */
  envValueBytes: 4_096,
  ports: 32,
  /** Bytes of UTF-8. */
  startupScriptBytes: 65_536,
  sshKeysPerTemplate: 20,
  volumesPerTemplate: 16,
  /** The longest shutdown window a rental may ask for, in hours (a year), as POST /v1/instances. */
  terminationHours: 8_760,
} as const;
