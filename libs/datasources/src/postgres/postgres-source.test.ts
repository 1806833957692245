import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import type { DataSourceConfig } from "@matoolkit/domain";
import { createDataSourceClient, DataSourceError } from "../index.ts";
import { failureOf } from "../failure-of.ts";

let database: TestDatabase;
let query: (sql: string) => Promise<unknown>;

const source = (sql: string, connection = "MEMBERS_DB_URL"): DataSourceConfig => ({
  type: "postgres",
  connection,
  query: sql,
  primaryKey: "upn",
  batchTimeColumn: "migration_at",
  multiValuedColumns: [],
});

const countRows = async (): Promise<number> =>
  Number(
    ((await query("SELECT count(*) AS n FROM source_members")) as { rows: Array<{ n: string }> }).rows[0]?.n,
  );

beforeAll(async () => {
  database = await createTestDatabase();
  query = async (sql) => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await query(`
    CREATE TABLE source_members (upn text PRIMARY KEY, migration_at timestamptz NOT NULL, groups text[] NOT NULL);
    INSERT INTO source_members VALUES
      ('a@contoso.com', '2030-01-01T10:00:00Z', '{g1,g2}'),
      ('b@contoso.com', '2030-01-01T10:00:00Z', '{}'),
      ('c@contoso.com', '2030-02-01T10:00:00Z', '{g3}');
  `);
});

afterAll(async () => {
  await database.drop();
});

describe("postgres data source", () => {
  const client = () => createDataSourceClient({ env: { MEMBERS_DB_URL: database.url } });

  it("returns every row of the query with the driver's types", async () => {
    const rows = await client().query(
      source("SELECT upn, migration_at, groups FROM source_members ORDER BY upn;"),
    );
    expect(rows).toEqual([
      { upn: "a@contoso.com", migration_at: new Date("2030-01-01T10:00:00Z"), groups: ["g1", "g2"] },
      { upn: "b@contoso.com", migration_at: new Date("2030-01-01T10:00:00Z"), groups: [] },
      { upn: "c@contoso.com", migration_at: new Date("2030-02-01T10:00:00Z"), groups: ["g3"] },
    ]);
  });

  it("returns at most `limit` rows for a preview", async () => {
    const rows = await client().query(
      source("SELECT upn FROM source_members ORDER BY upn DESC -- newest first"),
      {
        limit: 2,
      },
    );
    expect(rows).toEqual([{ upn: "c@contoso.com" }, { upn: "b@contoso.com" }]);
  });

  it("refuses writes: a data-modifying query fails and changes nothing", async () => {
    const insert = source(
      "WITH x AS (INSERT INTO source_members VALUES ('d@contoso.com', now(), '{}') RETURNING upn) SELECT * FROM x",
    );
    await expect(client().query(insert)).rejects.toThrow(
      /postgres source: query failed: .*read-only transaction/,
    );
    expect(await countRows()).toBe(3);
  });

  it("refuses to leave the read-only transaction with a second statement", async () => {
    const escape = source("COMMIT; DELETE FROM source_members");
    await expect(client().query(escape)).rejects.toThrow(
      /postgres source: query failed: .*multiple commands/,
    );
    expect(await countRows()).toBe(3);
  });

  it("names a missing environment variable, never a value", async () => {
    const error = await failureOf(client().query(source("SELECT 1", "MISSING_DB_URL")));
    expect(error).toBeInstanceOf(DataSourceError);
    expect((error as DataSourceError).reason).toBe("datasource.failed");
    expect((error as DataSourceError).message).toBe(
      "postgres source: environment variable MISSING_DB_URL (data_source.connection) is not set",
    );
  });

  it("reports a data exception by SQLSTATE without the offending value", async () => {
    const error = await failureOf(client().query(source("SELECT upn::int FROM source_members")));
    expect(error.message).toBe("postgres source: query failed: data exception (SQLSTATE 22P02)");
  });

  it("never shows the password of the connection URL", async () => {
    const env = { MEMBERS_DB_URL: "postgres://scheduler:S3cr3tPassw0rd@127.0.0.1:1/members" };
    const error = await failureOf(createDataSourceClient({ env }).query(source("SELECT 1")));
    expect(error.message).toMatch(/^postgres source: query failed: .*ECONNREFUSED/);
    expect(error.message).not.toContain("S3cr3tPassw0rd");
  });

  it("stops a slow query at the timeout", async () => {
    const slow = createDataSourceClient({ env: { MEMBERS_DB_URL: database.url }, timeoutMs: 300 });
    const started = Date.now();
    await expect(slow.query(source("SELECT pg_sleep(10)"))).rejects.toThrow(
      /postgres source: .*(timed out|timeout)/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("stops when the caller aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expect(
      client().query(source("SELECT pg_sleep(10)"), { signal: controller.signal }),
    ).rejects.toThrow("postgres source: query aborted");
  });
});
