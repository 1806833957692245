import type { Generated, Selectable } from "kysely";
import type { CreatedAt, NullableTimestamp } from "./column-types.ts";

/** One notification mailed (migration 0021); no addresses nor content, see notification-emails.repository.ts. */
export interface NotificationEmailsTable {
  notificationId: string;
  event: string;
  batchId: number | null;
  recipients: number;
  status: Generated<"sending" | "sent" | "failed">;
  httpStatus: number | null;
  errorCode: string | null;
  createdAt: CreatedAt;
  finishedAt: NullableTimestamp;
}

export type NotificationEmail = Selectable<NotificationEmailsTable>;
