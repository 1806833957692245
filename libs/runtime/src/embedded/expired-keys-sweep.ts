import { sql, type RawBuilder } from "kysely";
import type { AnyKysely } from "../any-kysely.ts";
import type { Logger } from "../logger.ts";
import { busSchema } from "./bus-tables.ts";

/**
 * The rows that live only until `expires_at` on the embedded runtime: the bus's dedupe keys (one
 * per message, a 10-minute window) and the idempotency keys (one per worker job with its recorded
 * outcome, the job's result and so member data, kept 7 days). Past it they read as absent, but
 * only a delete removes them: without it both tables grew for ever.
 */
export type ExpiringKeys = "dedupe" | "idempotency";

/** Rows deleted by one statement at most (a short transaction, short row locks). */
const chunkRows = 10_000;

const chunkStatement: Record<ExpiringKeys, (limit: number) => RawBuilder<unknown>> = {
  // `expires_at <= now()` again on the deleted row itself, not only in the choice: a key claimed
  // again after it expired (a message published again, a job redelivered) commits a new expiry,
  // PostgreSQL re-checks the DELETE's own conditions on that new version and leaves it alone. A
  // choice made by the sub-select alone would delete the fresh key with the old one.
  dedupe: (limit) => sql`
    WITH chosen AS MATERIALIZED (
      SELECT topic, message_id FROM ${sql.table(`${busSchema}.dedupe_keys`)}
      WHERE expires_at <= now() LIMIT ${limit}
    )
    DELETE FROM ${sql.table(`${busSchema}.dedupe_keys`)} AS k USING chosen
    WHERE k.topic = chosen.topic AND k.message_id = chosen.message_id AND k.expires_at <= now()`,
  idempotency: (limit) => sql`
    WITH chosen AS MATERIALIZED (
      SELECT key FROM idempotency_keys WHERE expires_at <= now() LIMIT ${limit}
    )
    DELETE FROM idempotency_keys AS k USING chosen
    WHERE k.key = chosen.key AND k.expires_at <= now()`,
};

/**
 * Deletes expired rows chunk by chunk until a chunk finds fewer than a full one, or after
 * `maxChunks`: a pass keeps up with any rate the bus reaches (one chunk per pass, as before, was
 * 10,000 keys per 5 minutes against thousands of messages per second). Returns the rows deleted.
 */
export async function deleteExpiredKeys(
  db: AnyKysely,
  keys: ExpiringKeys,
  options: { readonly chunkRows?: number; readonly maxChunks?: number } = {},
): Promise<number> {
  const limit = options.chunkRows ?? chunkRows;
  const maxChunks = options.maxChunks ?? 100;
  let deleted = 0;
  for (let chunk = 0; chunk < maxChunks; chunk++) {
    const result = await chunkStatement[keys](limit).execute(db);
    const rows = Number(result.numAffectedRows ?? 0);
    deleted += rows;
    if (rows < limit) break;
  }
  return deleted;
}

export interface ExpiredKeysSweep {
  stop(): Promise<void>;
}

/**
 * A pass over `keys` every `intervalMs` in this process (any process may sweep; a row deleted twice
 * is simply gone), never two passes at once; stop() waits for a pass in flight.
 */
export function startExpiredKeysSweep(options: {
  readonly db: AnyKysely;
  readonly keys: readonly ExpiringKeys[];
  readonly intervalMs: number;
  readonly logger: Logger;
}): ExpiredKeysSweep {
  let running: Promise<void> | undefined;
  const pass = async (): Promise<void> => {
    for (const keys of options.keys) {
      try {
        const deleted = await deleteExpiredKeys(options.db, keys);
        if (deleted > 0) options.logger.debug({ keys, deleted }, "expired keys deleted");
      } catch (error) {
        options.logger.warn({ err: error, keys }, "expired key sweep failed");
      }
    }
  };
  const timer = setInterval(() => {
    if (running !== undefined) return;
    running = pass().finally(() => (running = undefined));
  }, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
