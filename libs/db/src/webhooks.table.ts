import type { Generated, Insertable, Selectable, GeneratedAlways } from "kysely";
import type { CreatedAt } from "./column-types.ts";

/** Where to POST which notifications (issue 12); see webhooks.repository.ts. */
export interface WebhooksTable {
  id: GeneratedAlways<number>;
  /** http(s) only (CHECK). */
  url: string;
  /** Null: every runbook's batches; else only this runbook's. */
  runbookName: string | null;
  /** Notification types (libs/domain notificationTypes), at least one. */
  events: string[];
  /** Signs every body (HMAC-SHA256). Read only by the notifier; never returned after creation, never logged. */
  secret: string;
  enabled: Generated<boolean>;
  createdBy: string | null;
  createdAt: CreatedAt;
}

export type Webhook = Selectable<WebhooksTable>;
export type NewWebhook = Insertable<WebhooksTable>;
/** What may leave the database for the API: everything but the secret. */
export type WebhookView = Omit<Webhook, "secret">;
