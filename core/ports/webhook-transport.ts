/** How one POST to an endpoint ended. */
export type PostOutcome =
  | { kind: 'answered'; status: number }
  /** Nothing was sent: the address is not allowed (private, loopback, link-local) or the name does not resolve. */
  | { kind: 'refused'; reason: string }
  /** Sent, or tried, without an answer: timeout, connection refused or reset, TLS. */
  | { kind: 'unreachable'; reason: string };

/** The network edge of webhooks: where a URL may point, and posting to it. */
export interface WebhookTransport {
  /** Why `url` may not receive webhooks (its scheme, host, or what the host resolves to now); null: it may. */
  refusal(url: string): Promise<string | null>;
  /** POSTs `body` to `url` with `headers`, after resolving its host again and refusing a forbidden address. */
  post(url: string, headers: Record<string, string>, body: string): Promise<PostOutcome>;
}

/** Standard Webhooks signing: secrets in whsec_<base64> form, signatures `v1,<base64 HMAC-SHA256>`. */
export interface WebhookSigner {
  newSecret(): string;
  /** The webhook-signature header for this message id, timestamp and body. */
  sign(secret: string, messageId: string, at: Date, body: string): string;
}
