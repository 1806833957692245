import type { DaprStateStore } from "./dapr-state-store.ts";

/**
 * Per (subscription, message) delivery record in the Dapr state store. Dapr passes no delivery
 * count to the app and most brokers do not deduplicate, so the adapter keeps both itself:
 * - duplicate detection: a message id handled successfully within the window is acknowledged
 *   again without running the handler (Service Bus duplicate detection, for every broker);
 * - attempts: each run increments the count, so the handler sees `deliveryCount` and the adapter
 *   dead-letters after the limit whatever the broker's own redelivery policy;
 * - a lease: while one replica runs the handler, a concurrent copy is answered RETRY instead of
 *   running twice; a replica that died frees the lease when it expires.
 * A record past its time reads as absent and the next delivery takes it over
 * (dapr-state-store.ts: logical expiry, whatever the store's own TTL sweep does).
 *
 * "Handled" is a key of its own (`<key>|done`), written once with a first-write: one sidecar
 * call. Written into the delivery's record instead it would take two, a read for the ETag and the
 * conditional write, because Dapr's save answers no ETag and components-contrib's state.redis
 * refuses a plain write to a key first written with first-write concurrency (dapr-state-store.ts,
 * `put`). So a first delivery costs two calls (claim, done) instead of three. The delivery's
 * record is kept `leaseSeconds` longer than the done key, so while the done key lasts a copy's
 * claim is refused and it reads the done key: a duplicate. Records written as `done` in the
 * delivery's own key (before the done key) still read as handled.
 */
type LedgerRecord =
  | { readonly state: "running"; readonly attempts: number; readonly leaseUntil: string }
  | { readonly state: "failed"; readonly attempts: number }
  | { readonly state: "done"; readonly attempts: number };

export type BeginOutcome =
  | { readonly kind: "run"; readonly attempt: number }
  /** Handled (or dead-lettered) before: acknowledge without running. */
  | { readonly kind: "duplicate" }
  /** Another delivery of it is running now: ask the broker to try later. */
  | { readonly kind: "busy" };

export interface DeliveryLedger {
  begin(key: string): Promise<BeginOutcome>;
  /** What the ledger knows of a delivery (without changing it): undefined if it never ran here. */
  inspect(key: string): Promise<{ readonly handled: boolean; readonly attempts: number } | undefined>;
  succeeded(key: string, attempts: number): Promise<void>;
  failed(key: string, attempts: number): Promise<void>;
}

export interface DeliveryLedgerOptions {
  readonly state: DaprStateStore;
  /** How long a handled message id is remembered (the dedupe window). */
  readonly rememberSeconds: number;
  /** How long a running delivery holds its lease (the broker's lock duration). */
  readonly leaseSeconds: number;
}

export function createDeliveryLedger(options: DeliveryLedgerOptions): DeliveryLedger {
  const { state, rememberSeconds, leaseSeconds } = options;
  const recordSeconds = rememberSeconds + leaseSeconds;
  const doneKey = (key: string) => `${key}|done`;
  const running = (attempts: number): LedgerRecord => ({
    state: "running",
    attempts,
    leaseUntil: new Date(Date.now() + leaseSeconds * 1000).toISOString(),
  });
  const readDone = async (key: string) => (await state.get<LedgerRecord>(doneKey(key)))?.value;
  return {
    async begin(key) {
      for (let round = 0; round < 3; round += 1) {
        // A first delivery is the usual case: claim it with one conditional write (one sidecar
        // call), and read the records only when the key was taken.
        if (await state.create(key, running(1), recordSeconds)) return { kind: "run", attempt: 1 };
        if ((await readDone(key)) !== undefined) return { kind: "duplicate" };
        const existing = await state.get<LedgerRecord>(key);
        if (existing === undefined) continue; // deleted or expired since: claim it again
        const record = existing.value;
        switch (record.state) {
          case "done":
            return { kind: "duplicate" };
          case "running":
            if (Date.parse(record.leaseUntil) > Date.now()) return { kind: "busy" };
            break;
          case "failed":
            break;
          default: {
            const unknown: never = record;
            throw new Error(`Unreadable delivery record: ${JSON.stringify(unknown)}`);
          }
        }
        const attempt = record.attempts + 1;
        if (await state.replace(key, running(attempt), existing.etag, recordSeconds)) {
          return { kind: "run", attempt };
        }
      }
      return { kind: "busy" };
    },
    async inspect(key) {
      const done = await readDone(key);
      if (done !== undefined) return { handled: true, attempts: done.attempts };
      const record = (await state.get<LedgerRecord>(key))?.value;
      return record === undefined
        ? undefined
        : { handled: record.state === "done", attempts: record.attempts };
    },
    async succeeded(key, attempts) {
      const done = { state: "done", attempts } satisfies LedgerRecord;
      if (await state.create(doneKey(key), done, rememberSeconds)) return;
      // Refused: a copy that ran after a lost lease recorded it first, which is as good; or the
      // store failed the write, and then it is written as any other record (throws if it keeps failing).
      if ((await readDone(key)) === undefined) await state.put(doneKey(key), done, rememberSeconds);
    },
    async failed(key, attempts) {
      await state.put(key, { state: "failed", attempts } satisfies LedgerRecord, recordSeconds);
    },
  };
}
