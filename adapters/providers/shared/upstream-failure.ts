import { ZodError } from 'zod';
import { ProviderFailure } from '../../../core/ports/providers.ts';
import { UpstreamApiError, UpstreamTransportError } from './upstream-http.ts';

/**
 * What an adapter was doing when a call failed:
 * - create: the create itself (a lost answer may have made something);
 * - action: delete, restart and the steps before a create (keys, scripts): a 4xx is a refusal, else unreachable;
 * - read: everything else.
 */
export type Operation = 'create' | 'action' | 'read';

/** How one cloud's errors read: its client's error class for an error status, and its words for one. */
export interface FailureReading<E extends UpstreamApiError> {
  provider: string;
  apiError: abstract new (...args: never[]) => E;
  /** The error in words, a refused credential named by its variable. */
  describe(error: E): string;
  /** Whether a create answered with this error made nothing; default: any status under 500. */
  nothingMade?(error: E): boolean;
}

/**
 * A failed call as the ProviderFailure the rental flow acts on (docs/adding-a-provider.md, `adapter.ts`): an error
 * status on a create is rejected when nothing was made, else ambiguous; on an action rejected (4xx but 429) or
 * unavailable; on a read unavailable. No answer, an answer of a shape we cannot read, or anything else: ambiguous
 * for a create (it may have made something), unavailable otherwise.
 */
export function upstreamFailure<E extends UpstreamApiError>(reading: FailureReading<E>, operation: Operation, what: string, error: unknown): ProviderFailure {
  const { provider } = reading;
  if (error instanceof ProviderFailure) return error;
  if (error instanceof reading.apiError) {
    const message = `${what}: ${reading.describe(error)}`;
    if (operation === 'create') {
      const nothingMade = reading.nothingMade?.(error) ?? error.status < 500;
      return new ProviderFailure(provider, nothingMade ? 'rejected' : 'ambiguous', message, error.status);
    }
    if (operation === 'action') {
      const refused = error.status < 500 && error.status !== 429;
      return new ProviderFailure(provider, refused ? 'rejected' : 'unavailable', message, error.status);
    }
    return new ProviderFailure(provider, 'unavailable', message, error.status);
  }
  const kind = operation === 'create' ? 'ambiguous' : 'unavailable';
  if (error instanceof UpstreamTransportError) return new ProviderFailure(provider, kind, `${what}: ${error.message}`);
  if (error instanceof ZodError) return new ProviderFailure(provider, kind, `${what}: unexpected answer shape (${error.issues[0]?.message ?? 'invalid'})`);
  return new ProviderFailure(provider, kind, `${what}: ${String(error)}`);
}
