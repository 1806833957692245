/**
 * One `Idempotency-Key` per user action (issue 31). The admin API answers a POST sent again with
 * the same key as it answered the first (docs/architecture-operations.md), so a click retried
 * after the network failed cannot create a second batch or cancel twice — provided the retry
 * carries the first attempt's key, and a new action does not.
 *
 * The rule: a write that got no answer (the network failed) stays "unanswered" with its key. If
 * the next write is the same request (method, path, body), it is that action retried and gets the
 * same key; any other write gets a new random key and ends the unanswered one. A write that got
 * any answer (success or refusal) spends its key: clicking again is a new action. A request still
 * in flight keeps its key too, so a double click is answered 409 `idempotency.in_progress` by the
 * API instead of acting twice. Pure: no fetch, no storage (one instance per tab, in client.ts).
 */
export interface WriteRequest {
  readonly method: string;
  readonly path: string;
  /** The body as sent, when it is text (JSON or CSV); undefined without a body. */
  readonly body: string | undefined;
  /** A body that cannot be compared (a Blob, FormData): never taken for a retry. */
  readonly opaqueBody?: boolean;
}

export interface ActionKeys {
  /** The key to send with this write. */
  begin(request: WriteRequest): string;
  /** The write with this key got an answer the user acts upon: its key is spent. */
  answered(key: string): void;
}

export function createActionKeys(newKey: () => string = () => crypto.randomUUID()): ActionKeys {
  let unanswered: { readonly identity: string; readonly key: string } | undefined;
  return {
    begin(request) {
      const identity = request.opaqueBody === true ? undefined : identityOf(request);
      if (identity !== undefined && unanswered?.identity === identity) return unanswered.key;
      const key = newKey();
      unanswered = identity === undefined ? undefined : { identity, key };
      return key;
    },
    answered(key) {
      if (unanswered?.key === key) unanswered = undefined;
    },
  };
}

function identityOf(request: WriteRequest): string {
  return JSON.stringify([request.method.toUpperCase(), request.path, request.body ?? null]);
}
