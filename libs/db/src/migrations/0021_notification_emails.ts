import { sql, type Kysely, type Migration } from "kysely";

/**
 * Email notifications (issue 31 item 7): one row per notification mailed. The row is claimed
 * (inserted) before the send, so a notification delivered twice, or to two orchestrators, is
 * mailed at most once; the send's result is recorded on it. No addresses, subjects or bodies are
 * kept: the recipients' count, the HTTP status and a reason code.
 */
export const notificationEmailsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      CREATE TABLE notification_emails (
        notification_id text PRIMARY KEY,
        event text NOT NULL,
        batch_id integer,
        recipients integer NOT NULL CHECK (recipients > 0),
        status text NOT NULL DEFAULT 'sending' CHECK (status IN ('sending', 'sent', 'failed')),
        http_status integer,
        error_code text,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      )`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`DROP TABLE IF EXISTS notification_emails`.execute(db);
  },
};
