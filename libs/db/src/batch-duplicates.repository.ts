import { sql } from "kysely";
import type { Db } from "./connection.ts";

/** First key of the two-key advisory lock: keeps these locks apart from the publish locks. */
const DUPLICATE_LOCK_NAMESPACE = 0x6d61_6475; // "madu"

/**
 * For a manual batch about to be created from a CSV: serialises creations with the same
 * fingerprint until the caller's transaction ends (a transaction-scoped advisory lock), then finds
 * the newest batch with that fingerprint created in the last `windowSeconds` (by the database's
 * clock) that is not cancelled. Two identical uploads sent at once thus take turns: the second
 * sees the first's committed batch. Undefined: none. Run it in the transaction that then creates
 * the batch and calls {@link recordBatchSourceFingerprint}.
 */
export async function findRecentBatchWithFingerprint(
  trx: Db,
  fingerprint: string,
  windowSeconds: number,
): Promise<{ id: number; createdAt: Date } | undefined> {
  await lockFingerprint(trx, fingerprint);
  return trx
    .selectFrom("batchSourceFingerprints")
    .innerJoin("batches", "batches.id", "batchSourceFingerprints.batchId")
    .select(["batches.id as id", "batchSourceFingerprints.createdAt as createdAt"])
    .where("batchSourceFingerprints.fingerprint", "=", fingerprint)
    .where(
      "batchSourceFingerprints.createdAt",
      ">=",
      sql<Date>`now() - make_interval(secs => ${windowSeconds})`,
    )
    .where("batches.status", "<>", "cancelled")
    .orderBy("batchSourceFingerprints.createdAt", "desc")
    .orderBy("batches.id", "desc")
    .limit(1)
    .executeTakeFirst();
}

/** Stores the new batch's fingerprint (same transaction as the batch), holding the same lock. */
export async function recordBatchSourceFingerprint(
  trx: Db,
  batchId: number,
  fingerprint: string,
): Promise<void> {
  await lockFingerprint(trx, fingerprint);
  await trx.insertInto("batchSourceFingerprints").values({ batchId, fingerprint }).execute();
}

async function lockFingerprint(trx: Db, fingerprint: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${DUPLICATE_LOCK_NAMESPACE}::int, hashtext(${fingerprint}::text))`.execute(
    trx,
  );
}
