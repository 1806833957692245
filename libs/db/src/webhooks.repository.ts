import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { Webhook, WebhookView } from "./webhooks.table.ts";

export interface NewWebhookInput {
  readonly url: string;
  readonly runbookName: string | null;
  readonly events: readonly string[];
  readonly secret: string;
  readonly createdBy: string | null;
}

/** Every column but the secret: what reads for the API select. */
const viewColumns = ["id", "url", "runbookName", "events", "enabled", "createdBy", "createdAt"] as const;

/** Creates an enabled webhook; the secret goes in and, from this function, never comes back out. */
export async function insertWebhook(db: Db, input: NewWebhookInput): Promise<WebhookView> {
  return db
    .insertInto("webhooks")
    .values({
      url: input.url,
      runbookName: input.runbookName,
      events: [...input.events],
      secret: input.secret,
      createdBy: input.createdBy,
    })
    .returning(viewColumns)
    .executeTakeFirstOrThrow();
}

/** In id order, without secrets. */
export async function listWebhooks(db: Db): Promise<WebhookView[]> {
  return db.selectFrom("webhooks").select(viewColumns).orderBy("id").execute();
}

export async function getWebhookView(db: Db, id: number): Promise<WebhookView | undefined> {
  return db.selectFrom("webhooks").select(viewColumns).where("id", "=", id).executeTakeFirst();
}

/** With its secret: for the notifier, which signs with it. */
export async function getWebhookForDelivery(db: Db, id: number): Promise<Webhook | undefined> {
  return db.selectFrom("webhooks").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Deletes the webhook and its deliveries (ON DELETE CASCADE); false when there was none. */
export async function deleteWebhook(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom("webhooks").where("id", "=", id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * The enabled webhooks an event of `type` for a batch of `runbookName` goes to: the global ones
 * and the runbook's own, each subscribed to the type. Ids only (the fan-out needs no more).
 */
export async function listSubscribedWebhookIds(db: Db, runbookName: string, type: string): Promise<number[]> {
  const rows = await db
    .selectFrom("webhooks")
    .select("id")
    .where("enabled", "=", true)
    .where((eb) => eb.or([eb("runbookName", "is", null), eb("runbookName", "=", runbookName)]))
    .where(sql<boolean>`${type}::text = ANY(events)`)
    .orderBy("id")
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Whether any enabled webhook takes `type` for the runbook's batches. Asked in the transaction of
 * the change before queueing its notification, so a system without webhooks (or whose webhooks
 * ignore member failures) queues nothing per member failure. A webhook created a moment later
 * receives the events that happen after it, not one that was being committed meanwhile.
 */
export async function hasSubscribedWebhook(db: Db, runbookName: string, type: string): Promise<boolean> {
  const row = await db
    .selectFrom("webhooks")
    .select("id")
    .where("enabled", "=", true)
    .where((eb) => eb.or([eb("runbookName", "is", null), eb("runbookName", "=", runbookName)]))
    .where(sql<boolean>`${type}::text = ANY(events)`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
