import { sql, type Kysely, type Migration } from "kysely";

/**
 * Issue 29: a worker job's completion record becomes a HOT update of its claim's row.
 *
 * Each worker job writes its idempotency key twice: the claim inserts the row, the completion
 * rewrites it (state, outcome, owner and lease). That rewrite was never HOT, for two reasons
 * (https://www.postgresql.org/docs/15/storage-hot.html): it changed `expires_at`, the key of
 * `idempotency_keys_expires_at_idx`, and the page had no room for the new version, as the claims
 * fill pages in insertion order (PostgreSQL then also logs a lock on the old version before it
 * moves the row: `heap_update` in src/backend/access/heap/heapam.c). `BENCH_WAL_BREAKDOWN=1`
 * measured ~0.5 kB of WAL per step execution for it: a LOCK record, the new version on another
 * page, and a new entry in both indexes.
 *
 * The completion now keeps the claim's `expires_at` when it is within 1 % of the requested memory
 * (`completeKeysStatement`, idempotency-key-statements.ts), and claims fill pages only to 35 %:
 * the completed version holds the job's result message, about three times the claim's row, and
 * a settle statement completes many keys whose old versions cannot be pruned before it commits.
 * bench:orchestrator at 2,000 × 5: 0.78 of 1.10 completions per step HOT (0.37 at fill factor
 * 65), the table's WAL 1,215 → 1,024 bytes per step. Pages already full keep no room; their keys
 * are swept within their memory (7 days for worker jobs).
 */
export const hotIdempotencyCompletionMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`ALTER TABLE idempotency_keys SET (fillfactor = 35)`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`ALTER TABLE idempotency_keys RESET (fillfactor)`.execute(db);
  },
};
