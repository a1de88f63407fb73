/**
 * "alice@example.com" -> "a***@e***.com": enough for the person to recognise, too little to harvest. Every
 * provider masks this way (CodeSentOut `destination`), so an ask the mail allowance stopped, answered without
 * asking the provider, reads the same as one it answered.
 */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  const dot = domain.lastIndexOf('.');
  const tld = dot > 0 ? domain.slice(dot) : '';
  return `${[...local][0] ?? ''}***@${[...domain][0] ?? ''}***${tld}`;
}
