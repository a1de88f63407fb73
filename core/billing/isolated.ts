import { messageOf } from '../errors.ts';

/** Runs one step or item of a batch; its failure is recorded in `errors` and the batch carries on. */
export async function isolated(errors: string[], what: string, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    errors.push(`${what}: ${messageOf(error)}`);
  }
}
