import { randomUUID } from "node:crypto";

/**
 * The admin API's `Idempotency-Key` (docs/architecture-operations.md): a POST sent again with the
 * same key is answered as the first one was instead of acting twice. Every write the CLI sends
 * carries one: a fresh random key per request of an invocation, the same key for each retry of
 * that request (api-client.ts), so a command run again by the user is a new request, while the
 * CLI's own retry after a dropped connection cannot create a second batch or cancel twice.
 * PUT/PATCH/DELETE carry it too: the API ignores it there today, and they are idempotent by nature.
 */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function isWrite(method: string): boolean {
  return WRITE_METHODS.has(method.toUpperCase());
}

/** The key header for one request (all its attempts), none for a read. */
export function idempotencyHeaderFor(
  method: string,
  newKey: () => string = randomUUID,
): Record<string, string> {
  return isWrite(method) ? { [IDEMPOTENCY_KEY_HEADER]: newKey() } : {};
}
