/** Standard base64 (RFC 4648 §4) without the platform's helpers, so the core stays free of Node's Buffer. */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUE = new Map([...ALPHABET].map((char, index) => [char, index]));

/** The bytes of padded or unpadded base64 text; null when it is not base64 (other characters, a bad length or padding). */
export function decodeBase64(text: string): Uint8Array | null {
  const unpadded = text.replace(/={1,2}$/, '');
  if (text.length % 4 !== 0 && text.length !== unpadded.length) return null;
  if (unpadded.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((unpadded.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let at = 0;
  for (const char of unpadded) {
    const sextet = VALUE.get(char);
    if (sextet === undefined) return null;
    value = ((value << 6) | sextet) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (value >> bits) & 0xff;
    }
  }
  // bits left over must be zero, or the text is not the canonical encoding of any bytes
  if ((value & ((1 << bits) - 1)) !== 0) return null;
  return out;
}

/** Base64 of bytes; `padded: false` leaves out the trailing `=` (as OpenSSH prints fingerprints). */
export function encodeBase64(bytes: Uint8Array, options: { padded?: boolean } = {}): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const chunk = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
    for (let c = 0; c < chars; c++) out += ALPHABET[(chunk >> (18 - 6 * c)) & 63];
  }
  return options.padded === false ? out : out.padEnd(Math.ceil(out.length / 4) * 4, '=');
}
