import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import type { DataSourceConfig } from "@matoolkit/domain";
import { createDataSourceClient, DataSourceError } from "../index.ts";
import { failureOf } from "../../test/failure-of.ts";

let database: TestDatabase;
let query: (sql: string) => Promise<unknown>;

const source = (sql: string, connection = "MATOOLKIT_SOURCE_MEMBERS_DB"): DataSourceConfig => ({
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
  const client = () => createDataSourceClient({ env: { MATOOLKIT_SOURCE_MEMBERS_DB: database.url } });

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
      // Inside the cursor PostgreSQL refuses it as a data-modifying DECLARE; either way, no write.
      /postgres source: query failed: .*(read-only transaction|DECLARE CURSOR must not contain data-modifying statements)/,
    );
    expect(await countRows()).toBe(3);
  });

  it("refuses to leave the read-only transaction with a second statement", async () => {
    const escape = source("COMMIT; DELETE FROM source_members");
    await expect(client().query(escape)).rejects.toThrow(
      /postgres source: query failed: .*(multiple commands|syntax error)/,
    );
    expect(await countRows()).toBe(3);
  });

  it("names a missing environment variable, never a value", async () => {
    const error = await failureOf(client().query(source("SELECT 1", "MATOOLKIT_SOURCE_MISSING_DB")));
    expect(error).toBeInstanceOf(DataSourceError);
    expect((error as DataSourceError).reason).toBe("datasource.failed");
    expect((error as DataSourceError).message).toBe(
      "postgres source: environment variable MATOOLKIT_SOURCE_MISSING_DB (data_source.connection) is not set",
    );
  });

  it("refuses a variable outside MATOOLKIT_SOURCE_*: the server's own database and secrets stay out of reach", async () => {
    const env = { DATABASE_URL: database.url, MATOOLKIT_CLIENT_SECRET: "client-S3cret" };
    const server = createDataSourceClient({ env });
    for (const name of ["DATABASE_URL", "MATOOLKIT_CLIENT_SECRET"]) {
      const error = await failureOf(server.query(source("SELECT 1", name)));
      expect(error.message).toBe(
        `postgres source: environment variable ${name} (data_source.connection) may not be named by a runbook; ` +
          "use a MATOOLKIT_SOURCE_* variable",
      );
      expect(await server.accessProblems(source("SELECT 1", name))).toEqual([
        {
          field: "connection",
          message: `environment variable ${name} may not be named by a runbook; use a MATOOLKIT_SOURCE_* variable`,
        },
      ]);
    }
  });

  it("never echoes the parts of the variable's value a server error quotes (role, database)", async () => {
    for (const [part, value] of [
      ["S3cr3tRole", urlWith(database.url, { username: "S3cr3tRole" })],
      ["S3cr3tDb", urlWith(database.url, { pathname: "/S3cr3tDb" })],
    ] as const) {
      const env = { MATOOLKIT_SOURCE_MEMBERS_DB: value };
      const error = await failureOf(createDataSourceClient({ env }).query(source("SELECT 1")));
      // A trust-auth server says `role "…" does not exist`; a password-auth one (embedded) says
      // `password authentication failed for user "…"`: both quote the value, both are redacted.
      expect(error.message).toMatch(
        /^postgres source: query failed: .*(does not exist|authentication failed)/,
      );
      expect(error.message).toContain("[redacted]");
      expect(error.message).not.toContain(part);
    }
  });

  it("reports a data exception by SQLSTATE without the offending value", async () => {
    const error = await failureOf(client().query(source("SELECT upn::int FROM source_members")));
    expect(error.message).toBe("postgres source: query failed: data exception (SQLSTATE 22P02)");
  });

  it("never shows the password of the connection URL", async () => {
    const env = { MATOOLKIT_SOURCE_MEMBERS_DB: "postgres://scheduler:S3cr3tPassw0rd@127.0.0.1:1/members" };
    const error = await failureOf(createDataSourceClient({ env }).query(source("SELECT 1")));
    expect(error.message).toMatch(/^postgres source: query failed: .*ECONNREFUSED/);
    expect(error.message).not.toContain("S3cr3tPassw0rd");
  });

  it("stops a slow query at the timeout", async () => {
    const slow = createDataSourceClient({
      env: { MATOOLKIT_SOURCE_MEMBERS_DB: database.url },
      timeoutMs: 300,
    });
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

function urlWith(url: string, change: { username?: string; pathname?: string }): string {
  const changed = new URL(url);
  if (change.username !== undefined) changed.username = change.username;
  if (change.pathname !== undefined) changed.pathname = change.pathname;
  return changed.toString();
}
