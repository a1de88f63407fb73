import { BookingPass } from '../bookings/booking-pass.ts';
import { Budget } from '../budget.ts';
import { messageOf } from '../errors.ts';
import { drainQueue } from '../in-parallel.ts';
import type { MarketService } from '../market/market-service.ts';
import { NodeChooser } from '../market/node-chooser.ts';
import type { Clock } from '../ports/clock.ts';
import type { Provider } from '../ports/providers.ts';
import type { Storage } from '../ports/storage.ts';
import type { RentalService } from '../rentals/rental-service.ts';
import { recoverMachine, type RecoveryContext } from './recover-machine.ts';
import type { Recovery } from './recovery.ts';

/** A pass called outside the sweep (tests, tools) recovers what is due for at most this long. */
const STANDALONE_BUDGET_MS = 120_000;
/** A recovery left half way (its process died before the replacement was committed) is taken up again after this long. */
const STALE_CLAIM_MS = 10 * 60_000;

export interface RecoveryReport {
  recovered: number;
  failed: number;
  errors: string[];
  /** Replacements still waiting on their cloud when the budget ended: each finishes by itself. */
  leftRunning: number;
}

/**
 * The sweep's recovery step, in the starts half of the pass (docs/decisions.md, "Managed recovery"): the reconciler
 * only marks a machine lost, preempted or failed at its provider as due; here each due recovery is taken from the
 * queue every runner shares (FOR UPDATE SKIP LOCKED, marked recovering: a replica or a second pass never takes it
 * too) and its replacement rented (recover-machine.ts), no money lock held while a cloud creates.
 */
export class RecoveryStarter {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly market: MarketService;
  private readonly providerCount: number;
  private readonly context: RecoveryContext;

  constructor(deps: { storage: Storage; clock: Clock; rentals: Pick<RentalService, 'rent'>; market: MarketService; providers: readonly Provider[] }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.market = deps.market;
    this.providerCount = deps.providers.length;
    this.context = { storage: deps.storage, clock: deps.clock, rentals: deps.rentals, chooser: new NodeChooser(deps.market, deps.providers) };
  }

  async recoverDue(budget: Budget = Budget.of(STANDALONE_BUDGET_MS)): Promise<RecoveryReport> {
    const report: RecoveryReport = { recovered: 0, failed: 0, errors: [], leftRunning: 0 };
    // those to retry next pass are not taken up again in this one
    const retried: string[] = [];
    const pass = new BookingPass(this.storage, this.market);
    const drained = await drainQueue<Recovery>({
      // a replacement may be at any provider: the hands of a pass are shared, none held per lane
      hands: BookingPass.hands(this.providerCount).hands,
      budget,
      take: async (count) => {
        const now = this.clock.now();
        const claimed = await this.storage.autocommit((uow) => uow.recoveries.claimDue(now, new Date(now.getTime() - STALE_CLAIM_MS), count, retried));
        if (claimed.length > 0) await pass.refreshMarket();
        return claimed;
      },
      run: async (recovery) => {
        try {
          const outcome = await recoverMachine(this.context, recovery, {
            tokenOf: (id) => pass.tokenOf(id),
            retrying(why) {
              retried.push(recovery.instanceId);
              report.errors.push(`recovery of ${recovery.instanceId}: ${why} (retried next pass)`);
            },
          });
          if (outcome === 'recovered') report.recovered++;
          else if (outcome === 'failed') report.failed++;
        } catch (error) {
          // left recovering: a later pass takes it up again once its claim is stale
          report.errors.push(`recovery of ${recovery.instanceId}: ${messageOf(error)}`);
        }
      },
    });
    report.leftRunning = drained.leftRunning;
    return report;
  }
}
