import { sql, type Kysely, type Migration } from "kysely";

/**
 * Webhook notifications (issue 12). `webhooks`: where to POST which events, global
 * (runbook_name NULL) or for one runbook's batches; the secret signs every body.
 * `notification_deliveries`: one row per (webhook, event occurrence), the unit the notifier
 * retries; its attempts are kept on the row (`attempts`, at most the retry limit's worth), so
 * the API shows each one without a table that grows per attempt.
 */
export const notificationsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      CREATE TABLE webhooks (
        id serial PRIMARY KEY,
        url text NOT NULL CHECK (url ~ '^https?://'),
        runbook_name text,
        events text[] NOT NULL CHECK (cardinality(events) > 0),
        secret text NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        created_by text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`.execute(db);
    // The notifier's lookup: the enabled webhooks of one runbook plus the global ones.
    await sql`CREATE INDEX webhooks_runbook_idx ON webhooks (runbook_name) WHERE enabled`.execute(db);
    await sql`
      CREATE TABLE notification_deliveries (
        id bigserial PRIMARY KEY,
        webhook_id integer NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        notification_id text NOT NULL,
        event text NOT NULL,
        payload jsonb NOT NULL,
        status text NOT NULL DEFAULT 'pending'
          CHECK (status IN ('pending', 'failed', 'delivered', 'gave_up')),
        attempt integer NOT NULL DEFAULT 0,
        attempts jsonb NOT NULL DEFAULT '[]'::jsonb,
        http_status integer,
        error_code text,
        next_attempt_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        UNIQUE (webhook_id, notification_id)
      )`.execute(db);
    // GET /api/webhooks/{id}/deliveries pages by id; the unique key above serves the fan-out.
    await sql`CREATE INDEX notification_deliveries_page_idx ON notification_deliveries (webhook_id, id)`.execute(
      db,
    );
  },
  async down(db: Kysely<unknown>) {
    await sql`DROP TABLE IF EXISTS notification_deliveries`.execute(db);
    await sql`DROP TABLE IF EXISTS webhooks`.execute(db);
  },
};
