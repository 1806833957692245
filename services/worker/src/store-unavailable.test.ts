import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer } from "node:net";
import pg from "pg";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { isStoreUnavailable } from "./store-unavailable.ts";

/**
 * The worker retries recording a finished job only while the store is unreachable; these are the
 * errors node-postgres really raises in an outage, and one it raises for a value it refuses.
 */
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

async function errorOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

/** A port with nothing listening: what connecting to a stopped PostgreSQL meets. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return address.port;
}

describe("isStoreUnavailable", () => {
  it("recognises a refused connection (the server is down)", async () => {
    const client = new pg.Client({ host: "127.0.0.1", port: await closedPort(), user: "nobody" });
    const error = await errorOf(() => client.connect());
    expect(isStoreUnavailable(error)).toBe(true);
  });

  it("recognises a database closed to connections (ALLOW_CONNECTIONS false: the outage drill on a server)", async () => {
    const name = new URL(database.url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: database.url.replace(`/${name}`, "/postgres") });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
      const client = new pg.Client({ connectionString: database.url });
      const error = await errorOf(() => client.connect());
      expect(error).toMatchObject({ code: "55000", severity: "FATAL" });
      expect(isStoreUnavailable(error)).toBe(true);
    } finally {
      await admin.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`);
      await admin.end();
    }
  });

  it("does not take a statement-level 55000 (a refusal of the statement itself) for an outage", async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      // "currval of sequence is not yet defined in this session": 55000 raised by a statement.
      const refused = await errorOf(async () => {
        await client.query("CREATE TEMP SEQUENCE never_used");
        await client.query("SELECT currval('never_used')");
      });
      expect(refused).toMatchObject({ code: "55000", severity: "ERROR" });
      expect(isStoreUnavailable(refused)).toBe(false);
    } finally {
      await client.end();
    }
  });

  it("recognises a connection the server terminated (a restart), and the next query on it", async () => {
    const client = new pg.Client({ connectionString: database.url });
    client.on("error", () => {});
    await client.connect();
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const running = errorOf(() => client.query("SELECT pg_sleep(5)"));
      await new Promise((resolve) => setTimeout(resolve, 100));
      await admin.query("SELECT pg_terminate_backend($1)", [rows[0]?.pid]);
      expect(isStoreUnavailable(await running)).toBe(true);
      expect(isStoreUnavailable(await errorOf(() => client.query("SELECT 1")))).toBe(true);
    } finally {
      await admin.end();
    }
  });

  it("does not take a refused value for an outage", async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const error = await errorOf(() =>
        client.query("SELECT $1::jsonb", [JSON.stringify({ note: "a\u0000b" })]),
      );
      expect(error).toMatchObject({ code: "22P05" });
      expect(isStoreUnavailable(error)).toBe(false);
      expect(isStoreUnavailable(new Error("anything else"))).toBe(false);
    } finally {
      await client.end();
    }
  });
});
