import { createTestDatabase } from "@matoolkit/testing";
import type { TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "./logger.ts";
import { startPgListener } from "./pg-listener.ts";

describe("startPgListener", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  const notify = (payload: string) => sql`SELECT pg_notify('listener_test', ${payload})`.execute(database.db);
  const listenerPids = async () =>
    (
      await sql<{ pid: number }>`
        SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'listener-test'`.execute(database.db)
    ).rows.map((row) => row.pid);

  it("receives notifications, and again after its connection was killed", async () => {
    const payloads: string[] = [];
    let reconnects = 0;
    const listener = await startPgListener({
      connectionString: database.url,
      channel: "listener_test",
      applicationName: "listener-test",
      logger: createLogger({ level: "silent", name: "listener-test" }),
      onNotification: (payload) => payloads.push(payload),
      onReconnect: () => void reconnects++,
    });
    try {
      await notify("first");
      await vi.waitFor(() => expect(payloads).toEqual(["first"]));

      const [killed] = await listenerPids();
      await sql`SELECT pg_terminate_backend(${killed})`.execute(database.db);
      await vi.waitFor(() => expect(reconnects).toBe(1), { timeout: 15_000 });
      expect(await listenerPids()).not.toContain(killed);

      await notify("second");
      await vi.waitFor(() => expect(payloads).toEqual(["first", "second"]));
    } finally {
      await listener.close();
    }
    await vi.waitFor(async () => expect(await listenerPids()).toEqual([]));
  });
});
