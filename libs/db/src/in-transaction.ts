import type { Transaction } from "kysely";
import type { Db } from "./connection.ts";
import type { Database } from "./schema.ts";

/**
 * Runs `work` in the caller's transaction when `db` is one (so it commits or rolls back with the
 * caller's other writes), otherwise in a transaction of its own. Kysely cannot nest transactions.
 */
export async function inTransaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Transaction<Database>);
  return db.transaction().execute(work);
}
