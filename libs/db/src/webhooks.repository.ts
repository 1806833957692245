import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { Webhook, WebhookView } from "./webhooks.table.ts";

export interface NewWebhookInput {
  readonly url: string;
  readonly runbookName: string | null;
  readonly events: readonly string[];
  /** Already sealed by the caller (libs/platform secrets): this table never sees a clear secret. */
  readonly sealedSecret: string;
  readonly createdBy: string | null;
}

/** Every column but the secret and the tombstone: what reads for the API select. */
const viewColumns = ["id", "url", "runbookName", "events", "enabled", "createdBy", "createdAt"] as const;

/** Creates an enabled webhook; the secret goes in and, from this function, never comes back out. */
export async function insertWebhook(db: Db, input: NewWebhookInput): Promise<WebhookView> {
  return db
    .insertInto("webhooks")
    .values({
      url: input.url,
      runbookName: input.runbookName,
      events: [...input.events],
      secret: input.sealedSecret,
      createdBy: input.createdBy,
    })
    .returning(viewColumns)
    .executeTakeFirstOrThrow();
}

/** The live (not deleted) webhooks in id order, without secrets. */
export async function listWebhooks(db: Db): Promise<WebhookView[]> {
  return db.selectFrom("webhooks").select(viewColumns).where("deletedAt", "is", null).orderBy("id").execute();
}

/** A live webhook; undefined when there is none or it was deleted. */
export async function getWebhookView(db: Db, id: number): Promise<WebhookView | undefined> {
  return db
    .selectFrom("webhooks")
    .select(viewColumns)
    .where("id", "=", id)
    .where("deletedAt", "is", null)
    .executeTakeFirst();
}

/**
 * With its sealed secret: for the notifier, which opens it to sign. A deleted webhook is not
 * returned, so a retry queued before the deletion sends nothing.
 */
export async function getWebhookForDelivery(db: Db, id: number): Promise<Webhook | undefined> {
  return db
    .selectFrom("webhooks")
    .selectAll()
    .where("id", "=", id)
    .where("deletedAt", "is", null)
    .executeTakeFirst();
}

/**
 * Tombstones the webhook (its delivery history is kept); false when there was none or it was
 * already deleted. Its open deliveries are closed as given up, so none stays pending forever.
 */
export async function deleteWebhook(
  db: Db,
  id: number,
  deletion: { readonly by: string | null; readonly at: Date },
): Promise<boolean> {
  const deleted = await db
    .updateTable("webhooks")
    .set({ deletedAt: deletion.at, deletedBy: deletion.by, enabled: false })
    .where("id", "=", id)
    .where("deletedAt", "is", null)
    .returning("id")
    .executeTakeFirst();
  if (deleted === undefined) return false;
  await db
    .updateTable("notificationDeliveries")
    // webhook.disabled (libs/domain webhookErrorCodes): the receiver did not fail, we stopped sending.
    .set({ status: "gave_up", errorCode: "webhook.disabled", nextAttemptAt: null, finishedAt: deletion.at })
    .where("webhookId", "=", id)
    .where("status", "in", ["pending", "failed"])
    .execute();
  return true;
}

/** Whether a webhook with this id ever existed (deleted or not): its history can still be read. */
export async function webhookExists(db: Db, id: number): Promise<boolean> {
  const row = await db.selectFrom("webhooks").select("id").where("id", "=", id).executeTakeFirst();
  return row !== undefined;
}

/** Every stored secret with its id, deleted webhooks included: what the start-up sealing walks. */
export async function listStoredWebhookSecrets(db: Db): Promise<{ id: number; secret: string }[]> {
  return db.selectFrom("webhooks").select(["id", "secret"]).orderBy("id").execute();
}

/**
 * Replaces a stored secret, guarded by the value read: a process sealing at the same time (two
 * services starting together) changes nothing twice; false when the row changed meanwhile.
 */
export async function replaceStoredWebhookSecret(
  db: Db,
  change: { readonly id: number; readonly from: string; readonly to: string },
): Promise<boolean> {
  const result = await db
    .updateTable("webhooks")
    .set({ secret: change.to })
    .where("id", "=", change.id)
    .where("secret", "=", change.from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The live, enabled webhooks subscribed to `type` for `runbookName` (global ones included). */
function subscribed(db: Db, runbookName: string | null, type: string) {
  return (
    db
      .selectFrom("webhooks")
      .select("id")
      .where("enabled", "=", true)
      .where("deletedAt", "is", null)
      // No runbook (an alert about dead letters, say): the global webhooks only.
      .where((eb) =>
        runbookName === null
          ? eb("runbookName", "is", null)
          : eb.or([eb("runbookName", "is", null), eb("runbookName", "=", runbookName)]),
      )
      .where(sql<boolean>`${type}::text = ANY(events)`)
  );
}

/**
 * The webhooks an event of `type` for a batch of `runbookName` goes to: the global ones and the
 * runbook's own, each subscribed to the type. Ids only (the fan-out needs no more).
 */
export async function listSubscribedWebhookIds(
  db: Db,
  runbookName: string | null,
  type: string,
): Promise<number[]> {
  const rows = await subscribed(db, runbookName, type).orderBy("id").execute();
  return rows.map((row) => row.id);
}

/**
 * Whether any enabled webhook takes `type` for the runbook's batches. Asked in the transaction of
 * the change before queueing its notification, so a system without webhooks (or whose webhooks
 * ignore member failures) queues nothing per member failure. A webhook created a moment later
 * receives the events that happen after it, not one that was being committed meanwhile.
 */
export async function hasSubscribedWebhook(
  db: Db,
  runbookName: string | null,
  type: string,
): Promise<boolean> {
  const row = await subscribed(db, runbookName, type).limit(1).executeTakeFirst();
  return row !== undefined;
}
