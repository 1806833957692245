import type { Generated, Insertable, Selectable, GeneratedAlways } from "kysely";
import type { CreatedAt, NullableTimestamp } from "./column-types.ts";

/** Where to POST which notifications (issue 12); see webhooks.repository.ts. */
export interface WebhooksTable {
  id: GeneratedAlways<number>;
  /** http(s) only (CHECK); checked against the outbound policy at registration and at each send. */
  url: string;
  /** Null: every runbook's batches; else only this runbook's. */
  runbookName: string | null;
  /** Notification types (libs/domain notificationTypes), at least one. */
  events: string[];
  /**
   * Signs every body (HMAC-SHA256), stored sealed (AES-256-GCM, `v1:<keyId>:…`, migration 0012)
   * with a key that never enters the database. Opened only by the notifier at send time; never
   * returned after creation, never logged.
   */
  secret: string;
  enabled: Generated<boolean>;
  createdBy: string | null;
  createdAt: CreatedAt;
  /** Tombstone (migration 0012): no deliveries, hidden from lists; the delivery history stays. */
  deletedAt: NullableTimestamp;
  deletedBy: string | null;
}

export type Webhook = Selectable<WebhooksTable>;
export type NewWebhook = Insertable<WebhooksTable>;
/** What may leave the database for the API: everything but the secret and the tombstone. */
export type WebhookView = Omit<Webhook, "secret" | "deletedAt" | "deletedBy">;
