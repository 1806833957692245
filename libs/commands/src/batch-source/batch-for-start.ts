import type { Batch } from "@matoolkit/db";
import { batchMachine } from "@matoolkit/domain";

type BatchStart = Pick<Batch, "id" | "status" | "batchStartTime">;

/**
 * Which existing automated batch a start time belongs to. Finished batches count (unless
 * `inFlightOnly`): rows of a completed batch must not start it again. With several batches at
 * one time, an in-flight one wins over a finished one, then the newest.
 */
export function batchesByStartTime(
  batches: readonly BatchStart[],
  options: { readonly inFlightOnly: boolean },
): Map<number, number> {
  const chosen = new Map<number, BatchStart>();
  for (const batch of batches) {
    if (batch.batchStartTime === null) continue;
    const inFlight = !batchMachine.isTerminal(batch.status);
    if (options.inFlightOnly && !inFlight) continue;
    const time = batch.batchStartTime.getTime();
    const current = chosen.get(time);
    const currentInFlight = current !== undefined && !batchMachine.isTerminal(current.status);
    if (
      current === undefined ||
      (inFlight && !currentInFlight) ||
      (inFlight === currentInFlight && batch.id > current.id)
    ) {
      chosen.set(time, batch);
    }
  }
  return new Map([...chosen].map(([time, batch]) => [time, batch.id]));
}
