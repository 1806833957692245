import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import { abortableDelay } from "../../abortable-delay.ts";

/**
 * How long a lookup keeps trying when the identity is not found: an object created a moment ago
 * (by an earlier step) may not have replicated to the server that answers yet, and "not found" is
 * otherwise a permanent failure. A truly missing object fails after `attempts` tries. The
 * Test-* validators spend the same patience re-reading a check that does not hold yet (a write
 * made a moment ago that the answering server has not seen).
 */
export interface LookupPatience {
  readonly attempts: number;
  readonly delayMs: number;
}

export const defaultLookupPatience: LookupPatience = { attempts: 4, delayMs: 2_000 };

/**
 * Retries `lookup` while it fails with exchange.not_found, and while `holds` rejects its value,
 * up to the patience's attempts in all (`delayMs` apart, abortable). Returns the first value
 * `holds` accepts, or the last one read once the attempts are spent; rethrows the last
 * not-found. Without `holds`, any value is accepted.
 */
export async function withPatience<T>(
  patience: LookupPatience,
  signal: AbortSignal,
  lookup: () => Promise<T>,
  holds: (value: T) => boolean = () => true,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      const value = await lookup();
      if (holds(value) || attempt >= patience.attempts) return value;
    } catch (error) {
      const notFound = error instanceof NonRetriableError && error.reason === reasonCodes.exchangeNotFound;
      if (!notFound || attempt >= patience.attempts) throw error;
    }
    await abortableDelay(patience.delayMs, signal);
  }
}
