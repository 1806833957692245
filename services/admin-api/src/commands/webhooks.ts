import { randomBytes, randomUUID } from "node:crypto";
import {
  enqueueOutbox,
  getActiveRunbook,
  getWebhookView,
  insertDeliveries,
  insertWebhook,
  type Db,
  type WebhookView,
} from "@matoolkit/db";
import { NOTIFICATION_SCHEMA_VERSION, pingType, webhookDeliveryEnvelope } from "@matoolkit/domain";
import { notFound } from "../http/api-error.ts";

export interface CreateWebhookRequest {
  readonly url: string;
  readonly runbookName?: string | undefined;
  readonly events: readonly string[];
  readonly createdBy: string;
}

/**
 * A webhook with a fresh secret (32 random bytes, base64url), returned once here and never again:
 * the API has no read that includes it, and it is never logged. A runbook-scoped webhook must
 * name a runbook that exists (a typo would otherwise silently never fire).
 */
export async function createWebhookCommand(
  db: Db,
  request: CreateWebhookRequest,
): Promise<WebhookView & { secret: string }> {
  if (request.runbookName !== undefined && (await getActiveRunbook(db, request.runbookName)) === undefined) {
    throw notFound(`no active runbook named '${request.runbookName}'`);
  }
  const secret = randomBytes(32).toString("base64url");
  const webhook = await insertWebhook(db, {
    url: request.url,
    runbookName: request.runbookName ?? null,
    events: [...new Set(request.events)],
    secret,
    createdBy: request.createdBy,
  });
  return { ...webhook, secret };
}

/**
 * A `ping` through the same path as every notification (a delivery row, its first attempt queued
 * through the outbox, the notifier POSTs it): the answer is in the webhook's deliveries, and the
 * request returns at once, whatever the endpoint does.
 */
export async function pingWebhookCommand(
  db: Db,
  webhookId: number,
): Promise<{ deliveryId: number; notificationId: string }> {
  return db.transaction().execute(async (trx) => {
    if ((await getWebhookView(trx, webhookId)) === undefined)
      throw notFound(`webhook ${webhookId} does not exist`);
    const notificationId = `ping:${webhookId}:${randomUUID()}`;
    const [delivery] = await insertDeliveries(trx, [
      {
        webhookId,
        notificationId,
        event: pingType,
        payload: {
          schemaVersion: NOTIFICATION_SCHEMA_VERSION,
          id: notificationId,
          type: pingType,
          occurredAt: new Date().toISOString(),
          webhook: { id: webhookId },
        },
      },
    ]);
    if (delivery === undefined) throw new Error("ping delivery was not created");
    await enqueueOutbox(trx, [webhookDeliveryEnvelope({ DeliveryId: delivery.id, Attempt: 1 })]);
    return { deliveryId: delivery.id, notificationId };
  });
}
