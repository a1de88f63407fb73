import type { BackgroundMail } from '../identity/background-mail.ts';
import type { PeopleService } from '../identity/people-service.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids, Secrets } from '../ports/ids.ts';
import type { MailAllowance } from '../ports/mailer.ts';
import type { Storage } from '../ports/storage.ts';

/** What the invitation use cases work with. */
export interface InvitationContext {
  storage: Storage;
  clock: Clock;
  ids: Ids;
  secrets: Secrets;
  allowance: MailAllowance;
  /** null: no mailer configured, nothing is mailed (the code then only exists as its digest: invite again once mail works). */
  mail: BackgroundMail | null;
  /** Tells a tenant's people of each person who joins. */
  people: Pick<PeopleService, 'announceLinked'>;
}
