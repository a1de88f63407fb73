/**
 * Authenticated encryption of small secrets kept at rest (registry passwords). `associatedData` binds a sealed
 * value to its record (the image id): a sealed value copied onto another record does not open.
 */
export interface SecretBox {
  /** A fresh nonce each time: sealing the same text twice gives two different values. */
  seal(plaintext: string, associatedData: string): string;
  /** The plaintext; throws when the value was altered, sealed under another key or for other associated data. */
  open(sealed: string, associatedData: string): string;
}

/** SHA-256, for fingerprints of public key material (not for secrets: those go through Secrets.digest). */
export interface Sha256 {
  sha256(bytes: Uint8Array): Uint8Array;
}
