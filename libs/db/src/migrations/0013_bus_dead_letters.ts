import { sql, type Kysely, type Migration } from "kysely";

/**
 * The Dapr adapter's dead letters (libs/runtime/src/dapr/dead-letter-table.ts), created here by
 * the migrate role in schema `public` beside the other tables (issue 28, finding 3). Each SQL
 * service used to create `matoolkit_dapr.dead_letters` at start: the first service's role owned
 * the schema, every other service's role was refused (42501) and could not have written the table
 * anyway. Here it gets the services' grants as every other table does: the default privileges of
 * the migrate role (deploy/aca/hooks/db-roles.sh; deploy/README.md section 3 for Helm).
 */
export const busDeadLettersMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      CREATE TABLE bus_dead_letters (
        id bigserial PRIMARY KEY,
        message_id text NOT NULL,
        topic text NOT NULL,
        subscription text NOT NULL,
        body jsonb,
        properties jsonb NOT NULL,
        delivery_count integer NOT NULL,
        error text NOT NULL,
        dead_lettered_at timestamptz NOT NULL DEFAULT now(),
        -- A redelivered copy of a message already dead-lettered must not list it twice.
        UNIQUE (topic, subscription, message_id)
      )`.execute(db);
    // A database where a service created the old table (a single-role install, e.g. the embedded
    // or local one): keep its rows, in their order. Skipped where the migrate role cannot read it.
    await sql`
      DO $$
      BEGIN
        IF to_regclass('matoolkit_dapr.dead_letters') IS NOT NULL
           AND has_table_privilege('matoolkit_dapr.dead_letters', 'SELECT') THEN
          INSERT INTO bus_dead_letters
            (message_id, topic, subscription, body, properties, delivery_count, error, dead_lettered_at)
          SELECT message_id, topic, subscription, body, properties, delivery_count, error, dead_lettered_at
          FROM matoolkit_dapr.dead_letters ORDER BY id
          ON CONFLICT (topic, subscription, message_id) DO NOTHING;
        END IF;
      END $$`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`DROP TABLE IF EXISTS bus_dead_letters`.execute(db);
  },
};
