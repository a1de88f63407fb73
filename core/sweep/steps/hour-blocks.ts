import { crashPoint } from '../../crash-points.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Storage } from '../../ports/storage.ts';
import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';

/** Enough for a sweep that was stopped for a month; each round pays at most one block per instance. */
const MAX_BLOCK_ROUNDS = 800;

export type HourBlocksReport = Pick<PassCounts, 'blocksPaid'> & { errors: string[] };

/** Pays every hourly block that is due, round after round until none is left (a round pays one block per machine). */
export async function payDueBlocks(deps: { storage: Storage; clock: Clock }, report: Pick<PassCounts, 'blocksPaid'>): Promise<void> {
  for (let round = 0; round < MAX_BLOCK_ROUNDS; round++) {
    const paid = await deps.storage.transaction((uow) => uow.sweep.payDueBlocks(deps.clock.now()));
    report.blocksPaid += paid;
    if (paid === 0) break;
    // a block's charge and its advance are one statement (the sweep store's payDueBlocks): no crash falls between them
    crashPoint('between-block-rounds');
  }
}

/** `hour blocks`: each running machine's next hour is paid from the balance when it comes (docs/decisions.md, "Accounts, ledger, rentals"). */
export const hourBlocks = (deps: { storage: Storage; clock: Clock }): SweepStep<HourBlocksReport> => ({
  name: 'hour blocks',
  report: () => ({ blocksPaid: 0, errors: [] }),
  run: (report) => payDueBlocks(deps, report),
});
