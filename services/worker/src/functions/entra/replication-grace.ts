import { abortableDelay } from "../../abortable-delay.ts";

/**
 * Calls `probe` until it returns a value or `graceMs` has passed (then undefined), waiting
 * 250 ms, 500 ms, 1 s, then 2 s between calls. Abortable: a job timeout stops the wait at once.
 * Used where "not found" may only mean "not replicated yet" (see entra-options.ts).
 */
export async function untilFound<T>(
  probe: () => Promise<T | undefined>,
  graceMs: number,
  signal: AbortSignal,
): Promise<T | undefined> {
  const deadline = Date.now() + graceMs;
  for (let wait = 250; ; wait = Math.min(wait * 2, 2_000)) {
    const value = await probe();
    if (value !== undefined) return value;
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await abortableDelay(Math.min(wait, left), signal);
  }
}
