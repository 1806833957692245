import type { Db } from "./connection.ts";
import type { Runbook } from "./runbooks.table.ts";

/**
 * One runbook version, its row locked (FOR UPDATE) until the caller's transaction ends. FOR UPDATE,
 * not FOR NO KEY UPDATE: it also conflicts with the FOR KEY SHARE a new batch's foreign key takes
 * on the version it references, so a batch the scheduler is creating right now is either committed
 * (and seen by the caller's next statement) or waits until the caller has committed.
 */
export async function lockRunbookVersion(
  db: Db,
  name: string,
  version: number,
): Promise<Runbook | undefined> {
  return db
    .selectFrom("runbooks")
    .selectAll()
    .where("name", "=", name)
    .where("version", "=", version)
    .forUpdate()
    .executeTakeFirst();
}

/** Whether any version of `name` exists (tells "no such runbook" from "no such version"). */
export async function runbookNameExists(db: Db, name: string): Promise<boolean> {
  const row = await db
    .selectFrom("runbooks")
    .select("id")
    .where("name", "=", name)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Guarded: only an active version is changed; undefined when it was not active (idempotent).
 * Nothing else is touched: batches keep referencing (and running) the version they were created on.
 */
export async function deactivateRunbookVersion(db: Db, id: number): Promise<Runbook | undefined> {
  return db
    .updateTable("runbooks")
    .set({ isActive: false })
    .where("id", "=", id)
    .where("isActive", "=", true)
    .returningAll()
    .executeTakeFirst();
}

/**
 * For the scheduler's sync transaction: locks the version against a concurrent deactivation
 * (FOR SHARE conflicts with its FOR UPDATE) and tells whether it is still active. A tick that read
 * the runbook just before an operator deactivated it must not then create batches on it: either
 * the deactivation waits for this transaction (and sees the new batch, refusing with 409), or this
 * read waits for the deactivation and sees `false`.
 */
export async function holdRunbookVersionIfActive(db: Db, id: number): Promise<boolean> {
  const row = await db
    .selectFrom("runbooks")
    .select("isActive")
    .where("id", "=", id)
    .forShare()
    .executeTakeFirst();
  return row?.isActive === true;
}
