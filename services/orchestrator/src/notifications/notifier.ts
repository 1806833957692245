import {
  enqueueOutbox,
  getDelivery,
  getWebhookForDelivery,
  insertDeliveries,
  listSubscribedWebhookIds,
  recordDeliveryAttempt,
  type Db,
  type NotificationDelivery,
  type Webhook,
} from "@matoolkit/db";
import {
  InvalidMessageError,
  NonRetriableError,
  notificationMessageTypes,
  notificationPayloadSchema,
  notificationRunbook,
  reasonCodes,
  routingProperties,
  webhookDeliveryEnvelope,
  webhookDeliveryMessageSchema,
  webhookErrorCodes,
  type EventNotification,
  type WebhookDeliveryMessage,
} from "@matoolkit/domain";
import { outboundPolicy, type OutboundPolicy, type SecretKeyring } from "@matoolkit/platform";
import {
  DeliveryDeferredError,
  notificationsSubscription,
  type Delivery,
  type Logger,
  type MessageBus,
} from "@matoolkit/runtime";
import { sendWebhook, type WebhookAnswer } from "./send-webhook.ts";
import { mailNotification, type EmailNotifier } from "./email-notifier.ts";

/**
 * The notifier (issue 12): consumes the `notifications` topic with its own subscription.
 *
 * - `notification` (one per event occurrence, queued by the transition that caused it): one
 *   transaction creates a delivery row per subscribed webhook (unique per webhook and
 *   notification, so a redelivered notification creates nothing twice) and queues each
 *   delivery's first attempt through the outbox.
 * - `webhook-delivery` (one per attempt of one delivery): one POST, outside any transaction,
 *   then one transaction records the attempt (guarded by the attempt number, so a duplicate copy
 *   records nothing) and, if it failed and attempts remain, queues the next one with `deliverAt`
 *   = now + backoff. Each delivery is its own message, so a slow or dead endpoint delays only
 *   its own deliveries, never another webhook's nor the batch (which committed long before).
 *
 * An HTTP failure never throws: it is the receiver's problem, recorded and retried on our own
 * schedule; throwing would spend the bus's 10 deliveries in seconds and dead-letter the message.
 * Only database errors (and malformed messages) throw.
 */
export interface NotifierOptions {
  /** Wait before attempt n+1 after attempt n failed; attempts = this length + 1 (default 8). */
  readonly retryDelaysMs?: readonly number[];
  /** Per-request deadline (default 10 s). */
  readonly timeoutMs?: number;
  /** ± this fraction of each delay, so deliveries that failed together do not retry together. */
  readonly jitter?: number;
  readonly random?: () => number;
  /** Where deliveries may go (MATOOLKIT_WEBHOOK_ALLOWED_HOSTS); default: public addresses only. */
  readonly outbound?: OutboundPolicy;
  readonly now?: () => Date;
  /** Deliveries handled at once by this process. */
  readonly concurrency?: number;
}

/** 10 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h: eight attempts over about 3 h 50 min. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [
  10_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000,
];
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

export interface Notifier {
  /** Aborts requests in flight (their messages go back to the bus) and refuses new ones. */
  stop(): void;
}

export async function startNotifier(
  deps: {
    readonly db: Db;
    readonly bus: MessageBus;
    readonly logger: Logger;
    /** Opens each webhook's sealed secret at send time; absent: nothing is sent (secret unavailable). */
    readonly secrets: SecretKeyring | undefined;
    /** Email notifications (MATOOLKIT_NOTIFY_EMAIL=on, issue 31 item 7); absent: none. */
    readonly mail?: EmailNotifier;
  },
  options: NotifierOptions = {},
): Promise<Notifier> {
  const logger = deps.logger.child({ component: "notifier" });
  const stopping = new AbortController();
  const settings: DeliverySettings = {
    retryDelaysMs: options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS,
    timeoutMs: options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
    jitter: options.jitter ?? 0.2,
    random: options.random ?? Math.random,
    outbound: options.outbound ?? outboundPolicy(),
    secrets: deps.secrets,
    now: options.now ?? (() => new Date()),
    signal: stopping.signal,
  };
  await deps.bus.subscribe(
    { ...notificationsSubscription, concurrency: options.concurrency ?? 16 },
    async (delivery) => {
      if (stopping.signal.aborted) throw new DeliveryDeferredError("notifier stopping");
      await handleNotificationMessage(
        { db: deps.db, logger, settings, ...(deps.mail === undefined ? {} : { mail: deps.mail }) },
        delivery,
      );
    },
  );
  return { stop: () => stopping.abort(new DeliveryDeferredError("notifier stopping")) };
}

export interface DeliverySettings {
  readonly retryDelaysMs: readonly number[];
  readonly timeoutMs: number;
  readonly jitter: number;
  readonly random: () => number;
  readonly outbound: OutboundPolicy;
  readonly secrets: SecretKeyring | undefined;
  readonly now: () => Date;
  readonly signal: AbortSignal;
}

interface NotifierScope {
  readonly db: Db;
  readonly logger: Logger;
  readonly settings: DeliverySettings;
  readonly mail?: EmailNotifier;
}

export async function handleNotificationMessage(scope: NotifierScope, delivery: Delivery): Promise<void> {
  const type = delivery.properties[routingProperties.messageType];
  switch (type) {
    case notificationMessageTypes.notification: {
      const parsed = notificationPayloadSchema.safeParse(delivery.body);
      if (!parsed.success) throw new InvalidMessageError("notification body", parsed.error);
      if (parsed.data.type === "ping") {
        throw new NonRetriableError(
          reasonCodes.messageInvalid,
          "a ping is sent to one webhook, not fanned out",
        );
      }
      await fanOut(scope, parsed.data);
      if (scope.mail !== undefined) {
        const { db, logger, settings } = scope;
        await mailNotification(
          { db, logger, now: settings.now, signal: settings.signal },
          scope.mail,
          parsed.data,
        );
      }
      return;
    }
    case notificationMessageTypes.webhookDelivery: {
      const parsed = webhookDeliveryMessageSchema.safeParse(delivery.body);
      if (!parsed.success) throw new InvalidMessageError("webhook-delivery body", parsed.error);
      await attemptDelivery(scope, parsed.data);
      return;
    }
    default:
      throw new NonRetriableError(
        reasonCodes.messageInvalid,
        `Unknown MessageType ${JSON.stringify(type ?? null).slice(0, 60)} on notifications`,
      );
  }
}

/** One delivery per subscribed webhook, and its first attempt queued, in one transaction. */
async function fanOut(scope: NotifierScope, notification: EventNotification): Promise<void> {
  const created = await scope.db.transaction().execute(async (trx) => {
    const webhookIds = await listSubscribedWebhookIds(
      trx,
      notificationRunbook(notification),
      notification.type,
    );
    const rows = await insertDeliveries(
      trx,
      webhookIds.map((webhookId) => ({
        webhookId,
        notificationId: notification.id,
        event: notification.type,
        payload: notification,
      })),
    );
    await enqueueOutbox(
      trx,
      rows.map((row) => webhookDeliveryEnvelope({ DeliveryId: row.id, Attempt: 1 })),
    );
    return rows.length;
  });
  scope.logger.debug({ notificationId: notification.id, deliveries: created }, "notification fanned out");
}

async function attemptDelivery(scope: NotifierScope, message: WebhookDeliveryMessage): Promise<void> {
  const { db, settings, logger } = scope;
  const delivery = await getDelivery(db, message.DeliveryId);
  // Gone with its webhook (deleted), finished, or a stale copy of an attempt already recorded.
  if (delivery === undefined || !isOpen(delivery) || delivery.attempt !== message.Attempt - 1) return;
  const webhook = await getWebhookForDelivery(db, delivery.webhookId);
  if (webhook === undefined) return;
  const now = settings.now();
  const answer: WebhookAnswer = webhook.enabled
    ? await signAndSend(scope, webhook, delivery, now)
    : { delivered: false, httpStatus: null, errorCode: webhookErrorCodes.disabled, durationMs: 0 };
  const last = message.Attempt >= settings.retryDelaysMs.length + 1;
  const final =
    answer.delivered ||
    last ||
    answer.errorCode === webhookErrorCodes.gone ||
    answer.errorCode === webhookErrorCodes.disabled;
  const nextAttemptAt = final ? null : new Date(now.getTime() + backoff(settings, message.Attempt));
  const recorded = await db.transaction().execute(async (trx) => {
    const row = await recordDeliveryAttempt(trx, {
      id: delivery.id,
      attempt: message.Attempt,
      status: answer.delivered ? "delivered" : final ? "gave_up" : "failed",
      httpStatus: answer.httpStatus,
      errorCode: answer.errorCode,
      at: now,
      durationMs: answer.durationMs,
      nextAttemptAt,
    });
    if (row !== undefined && nextAttemptAt !== null) {
      await enqueueOutbox(trx, [
        webhookDeliveryEnvelope({ DeliveryId: delivery.id, Attempt: message.Attempt + 1 }, nextAttemptAt),
      ]);
    }
    return row;
  });
  if (recorded === undefined) return;
  // Ids, status and reason code only: the URL may carry credentials, the secret never leaves.
  // `detail` (why no answer came: refused address, DNS, refused connection, timeout) is in this
  // server log only; the delivery log shows the one generic code.
  const fields = {
    webhookId: webhook.id,
    deliveryId: delivery.id,
    event: delivery.event,
    attempt: message.Attempt,
    status: recorded.status,
    httpStatus: answer.httpStatus,
    reason: answer.errorCode,
    ...(answer.detail === undefined ? {} : { detail: answer.detail }),
  };
  if (recorded.status === "delivered") logger.info(fields, "webhook delivered");
  else if (recorded.status === "gave_up") logger.error(fields, "webhook delivery gave up");
  else logger.warn({ ...fields, nextAttemptAt }, "webhook delivery failed; retrying");
}

/**
 * Opens the sealed secret for this one send (it lives only in this call's memory), then POSTs.
 * A secret sealed with an unknown key sends nothing: the log names the key id, never a secret.
 */
async function signAndSend(
  scope: NotifierScope,
  webhook: Webhook,
  delivery: NotificationDelivery,
  now: Date,
): Promise<WebhookAnswer> {
  let secret: string;
  try {
    if (scope.settings.secrets === undefined) throw new Error("this process has no secrets key");
    secret = scope.settings.secrets.open(webhook.secret);
  } catch (error) {
    return {
      delivered: false,
      httpStatus: null,
      errorCode: webhookErrorCodes.secretUnavailable,
      durationMs: 0,
      detail: (error as Error).message,
    };
  }
  return sendWebhook(
    {
      url: webhook.url,
      secret,
      event: delivery.event,
      deliveryId: delivery.id,
      body: JSON.stringify(delivery.payload),
      now,
    },
    scope.settings,
  );
}

function isOpen(delivery: NotificationDelivery): boolean {
  return delivery.status === "pending" || delivery.status === "failed";
}

/** The wait after attempt `attempt` failed, with ± jitter. */
function backoff(settings: DeliverySettings, attempt: number): number {
  const base = settings.retryDelaysMs[Math.min(attempt, settings.retryDelaysMs.length) - 1] ?? 0;
  const spread = base * settings.jitter * (settings.random() * 2 - 1);
  return Math.max(0, Math.round(base + spread));
}
