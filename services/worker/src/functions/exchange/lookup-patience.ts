import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import { abortableDelay } from "../../abortable-delay.ts";

/**
 * How long a lookup keeps trying when the identity is not found: an object created a moment ago
 * (by an earlier step) may not have replicated to the server that answers yet, and "not found" is
 * otherwise a permanent failure. A truly missing object fails after `attempts` tries.
 */
export interface LookupPatience {
  readonly attempts: number;
  readonly delayMs: number;
}

export const defaultLookupPatience: LookupPatience = { attempts: 4, delayMs: 2_000 };

/** Retries `lookup` while it fails with exchange.not_found, up to the patience's attempts. */
export async function withPatience<T>(
  patience: LookupPatience,
  signal: AbortSignal,
  lookup: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await lookup();
    } catch (error) {
      const notFound = error instanceof NonRetriableError && error.reason === reasonCodes.exchangeNotFound;
      if (!notFound || attempt >= patience.attempts) throw error;
      await abortableDelay(patience.delayMs, signal);
    }
  }
}
