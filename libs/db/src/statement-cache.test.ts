import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { statementCachingClient } from "./statement-cache.ts";

let testDb: TestDatabase;
const clients: pg.Client[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.end()));
});
afterAll(async () => {
  await testDb.drop();
});

async function connect(threshold = 2, capacity = 200): Promise<pg.Client> {
  const Client = statementCachingClient({ threshold, capacity });
  const client = new Client({ connectionString: testDb.url });
  await client.connect();
  clients.push(client);
  return client;
}

/** What PostgreSQL holds prepared on this connection (pg_prepared_statements is per session). */
async function preparedTexts(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ statement: string }>(
    "SELECT statement FROM pg_prepared_statements WHERE NOT from_sql ORDER BY prepare_time",
  );
  return rows.map((row) => row.statement);
}

describe("statement cache", () => {
  it("prepares a statement from its second use on a connection, with the same results", async () => {
    const client = await connect();
    const text = "SELECT $1::int + 1 AS next";
    expect((await client.query(text, [1])).rows).toEqual([{ next: 2 }]);
    expect(await preparedTexts(client)).toEqual([]);
    expect((await client.query(text, [2])).rows).toEqual([{ next: 3 }]);
    expect((await client.query(text, [3])).rows).toEqual([{ next: 4 }]);
    expect(await preparedTexts(client)).toEqual([text]);
  });

  it("prepares what pg.Pool#query sends (a callback rather than a promise: pg-boss)", async () => {
    const pool = new pg.Pool({
      connectionString: testDb.url,
      max: 1,
      Client: statementCachingClient({ threshold: 1, capacity: 10 }),
    });
    try {
      const text = "SELECT $1::text || '!' AS shout";
      expect((await pool.query(text, ["a"])).rows).toEqual([{ shout: "a!" }]);
      const { rows } = await pool.query("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql");
      expect(rows.map((row: { statement: string }) => row.statement)).toContain(text);
      // An error comes back through the callback too (pg.Pool then discards that connection).
      await expect(pool.query("SELECT $1::int / 0", [1])).rejects.toMatchObject({ code: "22012" });
    } finally {
      await pool.end();
    }
  });

  it("leaves statements without parameters on the simple protocol (several statements in one text)", async () => {
    const client = await connect(1);
    const results = (await client.query("SELECT 1 AS a; SELECT 2 AS b")) as unknown as pg.QueryResult[];
    expect(results.map((result) => result.rows)).toEqual([[{ a: 1 }], [{ b: 2 }]]);
    expect(await preparedTexts(client)).toEqual([]);
  });

  it("holds at most `capacity` prepared statements on a connection; later texts run unnamed", async () => {
    const client = await connect(1, 3);
    for (let n = 0; n < 6; n += 1) {
      const text = `SELECT $1::int * ${n} AS product`;
      expect((await client.query(text, [7])).rows).toEqual([{ product: 7 * n }]);
    }
    expect(await preparedTexts(client)).toHaveLength(3);
  });

  it("re-prepares a statement whose table changed under it, retrying at once outside a transaction", async () => {
    const client = await connect(1);
    await client.query("CREATE TABLE widened (id int)");
    await client.query("INSERT INTO widened VALUES (1)");
    const text = "SELECT * FROM widened WHERE id = $1";
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1 }]);
    await client.query("ALTER TABLE widened ADD COLUMN label text DEFAULT 'x'");
    // Unnamed, PostgreSQL would refuse: "cached plan must not change result type" (0A000).
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1, label: "x" }]);
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1, label: "x" }]);
  });

  it("inside a transaction, fails that statement once (the transaction is retried) and works in the next", async () => {
    const client = await connect(1);
    await client.query("CREATE TABLE narrowed (id int, extra text)");
    await client.query("INSERT INTO narrowed VALUES (1, 'y')");
    const text = "SELECT * FROM narrowed WHERE id = $1";
    await client.query(text, [1]);
    await client.query("ALTER TABLE narrowed DROP COLUMN extra");
    await client.query("BEGIN");
    await expect(client.query(text, [1])).rejects.toMatchObject({ code: "0A000" });
    await client.query("ROLLBACK");
    await client.query("BEGIN");
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1 }]);
    await client.query("COMMIT");
  });

  it("prepares again a statement the session deallocated", async () => {
    const client = await connect(1);
    const text = "SELECT $1::text AS echoed";
    await client.query(text, ["a"]);
    await client.query("DEALLOCATE ALL");
    expect((await client.query(text, ["b"])).rows).toEqual([{ echoed: "b" }]);
    expect((await client.query(text, ["c"])).rows).toEqual([{ echoed: "c" }]);
    expect(await preparedTexts(client)).toEqual([text]);
  });

  it("is what createDb's pool uses by default: the services' repeated statements are prepared", async () => {
    const prepared = await testDb.db.connection().execute(async (connection) => {
      for (let n = 0; n < 3; n += 1)
        await connection.selectFrom("outbox").select("id").where("id", "=", n).execute();
      const { rows } = await sql<{ statement: string }>`
        SELECT statement FROM pg_prepared_statements WHERE NOT from_sql`.execute(connection);
      return rows.map((row) => row.statement);
    });
    expect(prepared).toContain('select "id" from "outbox" where "id" = $1');
  });

  it("refuses a policy that could never prepare", () => {
    expect(() => statementCachingClient({ threshold: 0, capacity: 10 })).toThrow(/threshold/);
    expect(() => statementCachingClient({ threshold: 2, capacity: 0 })).toThrow(/capacity/);
  });
});
