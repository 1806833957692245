import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { recordAuditEvent } from "./events.repository.ts";
import { inTransaction } from "./in-transaction.ts";
import type { OverdueBehavior, Runbook } from "./runbooks.table.ts";

export interface PublishRunbookInput {
  readonly name: string;
  readonly yamlContent: string;
  readonly overdueBehavior: OverdueBehavior;
  readonly rerunInit: boolean;
  readonly dataTableName?: string | null;
  /**
   * The operator publishing (admin API): recorded as an audit event (entity `runbook`, the new
   * version's id, to_status `active`) in the same transaction.
   */
  readonly actor?: string;
}

/** First key of the two-key advisory lock: keeps our publish locks apart from anyone else's. */
const PUBLISH_LOCK_NAMESPACE = 0x6d61_7075; // "mapu"

/**
 * Publishes the next version of a runbook (previous max + 1) as the active one, deactivating the
 * version that was active. Runs in the caller's transaction when `db` is one, otherwise in its own.
 * A transaction-scoped advisory lock on the name serialises concurrent publishes of the same name,
 * so two of them yield versions N and N+1 (the later one active) instead of a unique violation.
 */
export async function publishRunbook(db: Db, input: PublishRunbookInput): Promise<Runbook> {
  return inTransaction(db, async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${PUBLISH_LOCK_NAMESPACE}::int, hashtext(${input.name}::text))`.execute(
      trx,
    );
    const { latest } = await trx
      .selectFrom("runbooks")
      .select((eb) => eb.fn.max("version").as("latest"))
      .where("name", "=", input.name)
      .executeTakeFirstOrThrow();
    await trx
      .updateTable("runbooks")
      .set({ isActive: false })
      .where("name", "=", input.name)
      .where("isActive", "=", true)
      .execute();
    const published = await trx
      .insertInto("runbooks")
      .values({
        name: input.name,
        version: (latest ?? 0) + 1,
        yamlContent: input.yamlContent,
        dataTableName: input.dataTableName ?? null,
        isActive: true,
        overdueBehavior: input.overdueBehavior,
        rerunInit: input.rerunInit,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (input.actor !== undefined) {
      await recordAuditEvent(trx, {
        batchId: null,
        entity: "runbook",
        entityId: published.id,
        fromStatus: null,
        toStatus: "active",
        reason: `published ${published.name} version ${published.version}`,
        actor: input.actor,
      });
    }
    return published;
  });
}

export async function getActiveRunbook(db: Db, name: string): Promise<Runbook | undefined> {
  return db
    .selectFrom("runbooks")
    .selectAll()
    .where("name", "=", name)
    .where("isActive", "=", true)
    .executeTakeFirst();
}

export async function getRunbookVersion(db: Db, name: string, version: number): Promise<Runbook | undefined> {
  return db
    .selectFrom("runbooks")
    .selectAll()
    .where("name", "=", name)
    .where("version", "=", version)
    .executeTakeFirst();
}

export async function getRunbookById(db: Db, id: number): Promise<Runbook | undefined> {
  return db.selectFrom("runbooks").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The active version of every runbook, by name. */
export async function listActiveRunbooks(db: Db): Promise<Runbook[]> {
  return db.selectFrom("runbooks").selectAll().where("isActive", "=", true).orderBy("name").execute();
}

/** Every version of one runbook, newest first. */
export async function listRunbookVersions(db: Db, name: string): Promise<Runbook[]> {
  return db.selectFrom("runbooks").selectAll().where("name", "=", name).orderBy("version", "desc").execute();
}

/**
 * The scheduler's last failure for a runbook (000 runbooks.last_error): a reason code and a
 * sanitized message, never member data. Stored on the active version the tick processed.
 */
export async function recordRunbookError(db: Db, id: number, message: string, at: Date): Promise<void> {
  await db
    .updateTable("runbooks")
    .set((eb) => ({
      lastError: message,
      lastErrorAt: at,
      consecutiveFailures: eb("consecutiveFailures", "+", 1),
    }))
    .where("id", "=", id)
    .execute();
}

/** A successful tick clears the error; a no-op (no write) when there is none. */
export async function clearRunbookError(db: Db, id: number): Promise<void> {
  await db
    .updateTable("runbooks")
    .set({ lastError: null, lastErrorAt: null, consecutiveFailures: 0 })
    .where("id", "=", id)
    .where((eb) => eb.or([eb("lastError", "is not", null), eb("consecutiveFailures", ">", 0)]))
    .execute();
}

/**
 * overdue_behavior `ignore` skips past-due phases once, when the version takes over in-flight
 * batches (000 "Version Transition Protocol"); afterwards its phases fall due normally.
 */
export async function markIgnoreOverdueApplied(db: Db, id: number): Promise<void> {
  await db
    .updateTable("runbooks")
    .set({ ignoreOverdueApplied: true })
    .where("id", "=", id)
    .where("ignoreOverdueApplied", "=", false)
    .execute();
}
