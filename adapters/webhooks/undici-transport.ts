import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import type { PostOutcome, WebhookTransport } from '../../core/ports/webhook-transport.ts';
import { allowedAddress, LOCALHOST_NAMES } from './address-rules.ts';

/** Resolves a host name to its addresses (injected by tests to play DNS rebinding). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface WebhookTransportOptions {
  /** WEBHOOKS_ALLOW_HTTP=true: http:// and the loopback address are allowed for localhost, 127.0.0.1 and ::1 alone. */
  allowHttpLocalhost: boolean;
  /** Longest a POST may take, connection to the end of the answer. Default 10 s. */
  timeoutMs?: number;
  resolver?: Resolver;
}

const MAX_URL_LENGTH = 2048;

class RefusedAddress extends Error {}

/**
 * POSTs webhooks with undici, never to a private, loopback or link-local address (SSRF): the host is resolved and
 * every address checked before sending, and again by the connection itself (the address it connects to is one
 * checked there), so a name that resolves elsewhere between the two (DNS rebinding) is still refused. Redirects
 * are not followed. The answer's body is read and dropped.
 */
export class UndiciWebhookTransport implements WebhookTransport {
  private readonly allowLocalhost: boolean;
  private readonly timeoutMs: number;
  private readonly resolver: Resolver;
  private readonly agent: Agent;

  constructor(options: WebhookTransportOptions) {
    this.allowLocalhost = options.allowHttpLocalhost;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.resolver = options.resolver ?? systemResolver;
    this.agent = new Agent({
      connect: { timeout: this.timeoutMs, lookup: (hostname: string, opts: { all?: boolean }, callback: (...args: any[]) => void) => this.connectLookup(hostname, opts, callback) },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      keepAliveTimeout: 10_000,
    });
  }

  async refusal(url: string): Promise<string | null> {
    const parsed = this.parse(url);
    if (typeof parsed === 'string') return parsed;
    const checked = await this.check(parsed.hostname);
    return typeof checked === 'string' ? checked : null;
  }

  async post(url: string, headers: Record<string, string>, body: string): Promise<PostOutcome> {
    const parsed = this.parse(url);
    if (typeof parsed === 'string') return { kind: 'refused', reason: parsed };
    const checked = await this.check(parsed.hostname);
    if (typeof checked === 'string') return { kind: 'refused', reason: checked };
    try {
      const answer = await request(parsed, { method: 'POST', headers, body, dispatcher: this.agent, signal: AbortSignal.timeout(this.timeoutMs) });
      await answer.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      return { kind: 'answered', status: answer.statusCode };
    } catch (error) {
      const cause = error instanceof RefusedAddress ? error : (error as { cause?: unknown }).cause;
      if (cause instanceof RefusedAddress) return { kind: 'refused', reason: cause.message };
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return { kind: 'unreachable', reason: message.includes('Timeout') || message.includes('timeout') ? `no answer within ${this.timeoutMs} ms` : message };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** The URL's shape: a URL, https (or http to an allowed localhost), no credentials in it. */
  private parse(url: string): URL | string {
    if (url.length > MAX_URL_LENGTH) return `a URL of at most ${MAX_URL_LENGTH} characters`;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'not a URL; send an absolute https:// URL';
    }
    const host = hostOf(parsed);
    const local = LOCALHOST_NAMES.has(host);
    if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && local && this.allowLocalhost)) {
      return this.allowLocalhost ? 'must be https:// (http:// only for localhost, 127.0.0.1 or ::1)' : 'must be https://';
    }
    if (parsed.username || parsed.password) return 'must not carry a user name or password';
    if (!host) return 'has no host';
    return parsed;
  }

  /** The host's addresses when every one may receive webhooks; else why not. */
  private async check(hostname: string): Promise<LookupAddress[] | string> {
    const host = bare(hostname);
    let addresses: LookupAddress[];
    if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
    else {
      try {
        addresses = await this.resolver(host);
      } catch {
        return `the host ${host} does not resolve`;
      }
    }
    if (addresses.length === 0) return `the host ${host} does not resolve`;
    const bad = addresses.find((a) => !allowedAddress(a.address, host, this.allowLocalhost));
    return bad ? `the host ${host} resolves to ${bad.address}, a private, loopback, link-local or reserved address: webhooks go to public addresses only` : addresses;
  }

  /** The connection's own lookup: only checked addresses are connected to. */
  private connectLookup(hostname: string, opts: { all?: boolean }, callback: (...args: any[]) => void): void {
    this.check(hostname).then(
      (checked) => {
        if (typeof checked === 'string') callback(new RefusedAddress(checked));
        else if (opts.all) callback(null, checked);
        else callback(null, checked[0]!.address, checked[0]!.family);
      },
      (error: unknown) => callback(error),
    );
  }
}

/** The host without IPv6 brackets, lower case. */
const bare = (hostname: string): string => hostname.replace(/^\[|\]$/g, '').toLowerCase();
const hostOf = (url: URL): string => bare(url.hostname);
