import { abortableDelay } from "../../abortable-delay.ts";

/**
 * Calls `read` until `holds` accepts its value or `graceMs` has passed, waiting 250 ms, 500 ms,
 * 1 s, then 2 s between calls, and returns the last value read (accepted or not). Abortable: a
 * job timeout stops the wait at once with the signal's reason. Used where a read may be stale
 * only because the replica that answered has not seen a recent write yet (see entra-options.ts):
 * "not found" right after a create, a validator's mismatch right after the write it verifies.
 * The grace is measured from the first call, so time `read` itself spends waiting counts.
 */
export async function untilHolds<T>(
  read: () => Promise<T>,
  holds: (value: T) => boolean,
  graceMs: number,
  signal: AbortSignal,
): Promise<T> {
  const deadline = Date.now() + graceMs;
  for (let wait = 250; ; wait = Math.min(wait * 2, 2_000)) {
    const value = await read();
    if (holds(value)) return value;
    const left = deadline - Date.now();
    if (left <= 0) return value;
    await abortableDelay(Math.min(wait, left), signal);
  }
}

/** Calls `probe` until it returns a value or `graceMs` has passed (then undefined); see untilHolds. */
export function untilFound<T>(
  probe: () => Promise<T | undefined>,
  graceMs: number,
  signal: AbortSignal,
): Promise<T | undefined> {
  return untilHolds(probe, (value) => value !== undefined, graceMs, signal);
}
