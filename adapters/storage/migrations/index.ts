import { Migration0001TenantsAndTokens } from './0001-tenants-and-tokens.ts';
import { Migration0002MarketSummary } from './0002-market-summary.ts';
import { Migration0003AccountsLedgerInstances } from './0003-accounts-ledger-instances.ts';
import { Migration0004Payments } from './0004-payments.ts';
import { Migration0005FailuresAndConflicts } from './0005-failures-and-conflicts.ts';
import { Migration0006SandboxAndManualCheckouts } from './0006-sandbox-and-manual-checkouts.ts';
import { Migration0007LaunchOutcomes } from './0007-launch-outcomes.ts';
import { Migration0008BuiltinIdentity } from './0008-builtin-identity.ts';
import { Migration0009IdentityLinksAndSessions } from './0009-identity-links-and-sessions.ts';
import { Migration0010Catalog } from './0010-catalog.ts';
import { Migration0011SandboxRentalOptionsAndVolumes } from './0011-sandbox-rental-options-and-volumes.ts';
import { Migration0012Metering } from './0012-metering.ts';
import { Migration0013VolumesAndRentalOptions } from './0013-volumes-and-rental-options.ts';
import { Migration0014Reservations } from './0014-reservations.ts';
import { Migration0015SpotClaims } from './0015-spot-claims.ts';
import { Migration0016SandboxSpotMarket } from './0016-sandbox-spot-market.ts';
import { Migration0017Webhooks } from './0017-webhooks.ts';
import { Migration0018MarketSnapshots } from './0018-market-snapshots.ts';
import { Migration0019SessionIdentities } from './0019-session-identities.ts';
import { Migration0020VolumesCreating } from './0020-volumes-creating.ts';
import { Migration0022AuthThrottlesAndMailAllowance } from './0022-auth-throttles-and-mail-allowance.ts';
import { Migration0023UnconfirmedSignUps } from './0023-unconfirmed-sign-ups.ts';

/** Every migration, in order. A new one is a new file here and one line below. */
export const migrations = [
  { name: '0001-tenants-and-tokens', class: Migration0001TenantsAndTokens },
  { name: '0002-market-summary', class: Migration0002MarketSummary },
  { name: '0003-accounts-ledger-instances', class: Migration0003AccountsLedgerInstances },
  { name: '0004-payments', class: Migration0004Payments },
  { name: '0005-failures-and-conflicts', class: Migration0005FailuresAndConflicts },
  { name: '0006-sandbox-and-manual-checkouts', class: Migration0006SandboxAndManualCheckouts },
  { name: '0007-launch-outcomes', class: Migration0007LaunchOutcomes },
  { name: '0008-builtin-identity', class: Migration0008BuiltinIdentity },
  { name: '0009-identity-links-and-sessions', class: Migration0009IdentityLinksAndSessions },
  { name: '0010-catalog', class: Migration0010Catalog },
  { name: '0011-sandbox-rental-options-and-volumes', class: Migration0011SandboxRentalOptionsAndVolumes },
  { name: '0012-metering', class: Migration0012Metering },
  { name: '0013-volumes-and-rental-options', class: Migration0013VolumesAndRentalOptions },
  { name: '0014-reservations', class: Migration0014Reservations },
  { name: '0015-spot-claims', class: Migration0015SpotClaims },
  { name: '0016-sandbox-spot-market', class: Migration0016SandboxSpotMarket },
  { name: '0017-webhooks', class: Migration0017Webhooks },
  { name: '0018-market-snapshots', class: Migration0018MarketSnapshots },
  { name: '0019-session-identities', class: Migration0019SessionIdentities },
  { name: '0020-volumes-creating', class: Migration0020VolumesCreating },
  { name: '0022-auth-throttles-and-mail-allowance', class: Migration0022AuthThrottlesAndMailAllowance },
  { name: '0023-unconfirmed-sign-ups', class: Migration0023UnconfirmedSignUps },
];
