import type { IdentityRef } from './identity.ts';

/** A device flow just begun at a code host (RFC 8628): the person enters `userCode` at `verificationUri`. */
export interface DeviceStart {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  /** Seconds until the device code expires. */
  expiresIn: number;
  /** Seconds to wait between polls. */
  interval: number;
}

/** What the code host says of a device code now. */
export type DevicePoll =
  | { status: 'pending' }
  /** Polled too fast: wait `interval` seconds (the new, longer interval) from now on. */
  | { status: 'slow_down'; interval: number }
  | { status: 'expired' }
  | { status: 'denied' }
  | { status: 'complete'; identity: IdentityRef };

/**
 * An OAuth device flow at a code-hosting identity provider (GitHub). Outages throw ProviderFailure-like
 * errors (anything not a DomainError), which the host answers with 503.
 */
export interface CodeHost {
  /** "github": the `provider` of the identities it returns. */
  readonly name: string;
  startDevice(): Promise<DeviceStart>;
  pollDevice(deviceCode: string): Promise<DevicePoll>;
}
