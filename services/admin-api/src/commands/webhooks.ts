import { randomBytes, randomUUID } from "node:crypto";
import {
  deleteWebhook,
  enqueueOutbox,
  getActiveRunbook,
  getWebhookView,
  insertDeliveries,
  insertWebhook,
  recordAuditEvent,
  type Db,
  type WebhookView,
} from "@matoolkit/db";
import { NOTIFICATION_SCHEMA_VERSION, pingType, webhookDeliveryEnvelope } from "@matoolkit/domain";
import type { OutboundPolicy, SecretKeyring } from "@matoolkit/platform";
import { notFound } from "../http/api-error.ts";
import { refuseUnreachableDestination } from "./webhook-destination.ts";

export interface CreateWebhookRequest {
  readonly url: string;
  readonly runbookName?: string | undefined;
  readonly events: readonly string[];
  readonly createdBy: string;
}

export interface WebhookCommandDeps {
  readonly db: Db;
  /** The address policy every send obeys (checked here too, so a refused URL is never stored). */
  readonly outbound: OutboundPolicy;
  /** Seals the secret before it reaches the database; undefined: webhooks cannot be created. */
  readonly secrets: SecretKeyring | undefined;
}

/**
 * A webhook with a fresh secret (32 random bytes, base64url), returned once here and never again:
 * the API has no read that includes it, it is stored sealed, and it is never logged. The URL's
 * host is resolved and checked now (a loopback, private or metadata address is refused with the
 * reason; each send checks again). A runbook-scoped webhook must name a runbook that exists (a
 * typo would otherwise silently never fire). The audit row never holds the URL (it may carry a token).
 */
export async function createWebhookCommand(
  deps: WebhookCommandDeps,
  request: CreateWebhookRequest,
): Promise<WebhookView & { secret: string }> {
  if (deps.secrets === undefined)
    throw new Error("this admin API has no secrets key: webhooks cannot be created");
  await refuseUnreachableDestination(request.url, deps.outbound);
  const secret = randomBytes(32).toString("base64url");
  const sealedSecret = deps.secrets.seal(secret);
  const events = [...new Set(request.events)];
  const webhook = await deps.db.transaction().execute(async (trx) => {
    if (
      request.runbookName !== undefined &&
      (await getActiveRunbook(trx, request.runbookName)) === undefined
    ) {
      throw notFound(`no active runbook named '${request.runbookName}'`);
    }
    const created = await insertWebhook(trx, {
      url: request.url,
      runbookName: request.runbookName ?? null,
      events,
      sealedSecret,
      createdBy: request.createdBy,
    });
    await recordAuditEvent(trx, {
      batchId: null,
      entity: "webhook",
      entityId: created.id,
      fromStatus: null,
      toStatus: "active",
      reason: `webhook for ${request.runbookName ?? "every runbook"}: ${events.join(", ")}`,
      actor: request.createdBy,
    });
    return created;
  });
  return { ...webhook, secret };
}

/** Tombstones the webhook (no more deliveries, history kept) and records who did it. */
export async function deleteWebhookCommand(
  db: Db,
  request: { readonly id: number; readonly actor: string },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await deleteWebhook(trx, request.id, { by: request.actor, at: new Date() }))) {
      throw notFound(`webhook ${request.id} does not exist`);
    }
    await recordAuditEvent(trx, {
      batchId: null,
      entity: "webhook",
      entityId: request.id,
      fromStatus: "active",
      toStatus: "deleted",
      reason: "webhook deleted",
      actor: request.actor,
    });
  });
}

/**
 * A `ping` through the same path as every notification (a delivery row, its first attempt queued
 * through the outbox, the notifier POSTs it under the outbound policy): the answer is in the
 * webhook's deliveries, and the request returns at once, whatever the endpoint does.
 */
export async function pingWebhookCommand(
  db: Db,
  request: { readonly id: number; readonly actor: string },
): Promise<{ deliveryId: number; notificationId: string }> {
  const webhookId = request.id;
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
    // An annotation (from = to): the webhook did not change, but someone made the server send.
    await recordAuditEvent(trx, {
      batchId: null,
      entity: "webhook",
      entityId: webhookId,
      fromStatus: "active",
      toStatus: "active",
      reason: `ping queued as delivery ${delivery.id}`,
      actor: request.actor,
    });
    return { deliveryId: delivery.id, notificationId };
  });
}
