import type { AccessToken, TokenCredential } from "@azure/identity";
import { freePort } from "@matoolkit/dapr-harness/free-port";
import { describe, expect, it } from "vitest";
import type { DataSourceConfig } from "@matoolkit/domain";
import { createDataSourceClient, DataSourceError } from "../index.ts";
import { failureOf } from "../../test/failure-of.ts";
import type { SqlServerConnectOptions, SqlServerConnector } from "./sql-server-connector.ts";

const token = "fake-dataverse-token-7";
const config: DataSourceConfig = {
  type: "dataverse",
  connection: "DATAVERSE_CONNECTION_STRING",
  query: "SELECT upn, migrationdate FROM cr123_members;",
  primaryKey: "upn",
  batchTimeColumn: "migrationdate",
  multiValuedColumns: [],
};

function fakeCredential(scopes: string[]): TokenCredential {
  return {
    getToken: async (scope): Promise<AccessToken> => {
      scopes.push(String(scope));
      return { token, expiresOnTimestamp: Date.now() + 3_600_000 };
    },
  };
}

/** A connector standing in for the TDS driver: records what it was given, answers with `respond`. */
function fakeConnector(respond: (sql: string) => Promise<Array<Record<string, unknown>>>) {
  const calls = {
    connects: [] as SqlServerConnectOptions[],
    queries: [] as Array<{ sql: string; maxRows?: number }>,
    closes: 0,
  };
  const connector: SqlServerConnector = async (options) => {
    calls.connects.push(options);
    return {
      query: async (sql, options = {}) => {
        calls.queries.push({ sql, ...options });
        return respond(sql);
      },
      close: async () => {
        calls.closes += 1;
      },
    };
  };
  return { connector, calls };
}

describe("dataverse data source (TDS endpoint)", () => {
  it("connects to the org host with an Entra token for it and forwards the query", async () => {
    const scopes: string[] = [];
    const rows = [{ upn: "a@contoso.com", migrationdate: new Date("2030-01-01T10:00:00Z") }];
    // A fresh array per answer, as the driver's: the client releases each row it hands over.
    const { connector, calls } = fakeConnector(async () => [...rows]);
    const client = createDataSourceClient({
      env: { DATAVERSE_CONNECTION_STRING: "Server=Contoso.crm.dynamics.com,5558;Database=contoso" },
      credential: fakeCredential(scopes),
      sqlServer: connector,
      timeoutMs: 5_000,
    });
    expect(await client.query(config)).toEqual(rows);
    expect(scopes).toEqual(["https://contoso.crm.dynamics.com/.default"]);
    expect(calls.connects).toEqual([
      {
        server: "contoso.crm.dynamics.com",
        port: 5558,
        database: "contoso",
        accessToken: token,
        timeoutMs: 5_000,
      },
    ]);
    expect(calls.queries).toEqual([{ sql: config.query }]);
    expect(calls.closes).toBeGreaterThanOrEqual(1);
  });

  it("accepts the organization URL and asks the driver to stop after `limit` rows", async () => {
    const scopes: string[] = [];
    const { connector, calls } = fakeConnector(async () => [{ upn: "a" }, { upn: "b" }]);
    const client = createDataSourceClient({
      env: { DATAVERSE_CONNECTION_STRING: "https://contoso.crm4.dynamics.com/" },
      credential: fakeCredential(scopes),
      sqlServer: connector,
    });
    expect(await client.query(config, { limit: 2 })).toEqual([{ upn: "a" }, { upn: "b" }]);
    expect(scopes).toEqual(["https://contoso.crm4.dynamics.com/.default"]);
    expect(calls.connects[0]).toMatchObject({ server: "contoso.crm4.dynamics.com", port: 1433 });
    expect(calls.queries).toEqual([{ sql: config.query, maxRows: 2 }]);
  });

  it("sanitizes driver errors: no token, no quoted values", async () => {
    const { connector, calls } = fakeConnector(async () => {
      throw new Error(
        `Conversion failed when converting the nvarchar value 'jdoe@contoso.com' to data type int. ${token}`,
      );
    });
    const client = createDataSourceClient({
      env: { DATAVERSE_CONNECTION_STRING: "contoso.crm.dynamics.com" },
      credential: fakeCredential([]),
      sqlServer: connector,
    });
    const error = await failureOf(client.query(config));
    expect(error).toBeInstanceOf(DataSourceError);
    expect(error.message).toBe(
      "dataverse source: query failed: Conversion failed when converting the nvarchar value '…' to data type int. [redacted]",
    );
    expect(calls.closes).toBeGreaterThanOrEqual(1);
  });

  it("says what to change when the result exceeds the endpoint's 80 MB, never echoing the driver text", async () => {
    // What tedious raises for the endpoint's error message (text as Microsoft documents it; the
    // error number is not documented, so none is given here either).
    const { connector, calls } = fakeConnector(async () => {
      throw Object.assign(new Error("Return records size cannot exceed 83886080."), {
        name: "RequestError",
        code: "EREQUEST",
      });
    });
    const client = createDataSourceClient({
      env: { DATAVERSE_CONNECTION_STRING: "contoso.crm.dynamics.com" },
      credential: fakeCredential([]),
      sqlServer: connector,
    });
    const error = await failureOf(client.query(config));
    expect(error).toBeInstanceOf(DataSourceError);
    expect(error.message).toBe(
      "dataverse source: query failed: result exceeds the Dataverse TDS endpoint's 80 MB limit; " +
        "select fewer columns (multi-line text, choice labels) or fewer rows (WHERE; split by key range)",
    );
    // Retrying the same query cannot help.
    expect((error as DataSourceError).retriable).toBe(false);
    expect(calls.closes).toBeGreaterThanOrEqual(1);
  });

  it("refuses to run without a credential from the entry point rather than guess one", async () => {
    const { connector, calls } = fakeConnector(async () => []);
    const client = createDataSourceClient({
      env: { DATAVERSE_CONNECTION_STRING: "contoso.crm.dynamics.com" },
      sqlServer: connector,
    });
    const error = await failureOf(client.query(config));
    expect(error.message).toBe(
      "dataverse source: no Azure credential was configured for this process (the entry point passes one chosen by MATOOLKIT_AZURE_CREDENTIAL)",
    );
    expect((error as DataSourceError).retriable).toBe(false);
    expect(calls.connects).toEqual([]);
  });

  it("closes the connection to cancel a query that outlives the timeout", async () => {
    const { connector, calls } = fakeConnector(() => new Promise(() => undefined));
    const client = createDataSourceClient({
      env: { DATAVERSE_CONNECTION_STRING: "contoso.crm.dynamics.com" },
      credential: fakeCredential([]),
      sqlServer: connector,
      timeoutMs: 200,
    });
    await expect(client.query(config)).rejects.toThrow("dataverse source: query timed out after 0.2 s");
    expect(calls.closes).toBeGreaterThanOrEqual(1);
  });

  it("names the variable when it holds no Dataverse host, never its value", async () => {
    const client = createDataSourceClient({
      env: { DATAVERSE_CONNECTION_STRING: "Password=hunter2;User ID=sa" },
      credential: fakeCredential([]),
      sqlServer: fakeConnector(async () => []).connector,
    });
    const error = await failureOf(client.query(config));
    expect(error.message).toBe(
      "dataverse source: environment variable DATAVERSE_CONNECTION_STRING (data_source.connection) does not name a Dataverse host",
    );
  });

  it("uses the tedious driver by default and reports an unreachable endpoint", async () => {
    // A port nobody listens on (nor will: it is this process's), so the real driver's connect fails.
    const port = await freePort();
    const client = createDataSourceClient({
      env: { DATAVERSE_CONNECTION_STRING: `Server=127.0.0.1,${port}` },
      credential: fakeCredential([]),
      timeoutMs: 5_000,
    });
    const error = await failureOf(client.query(config));
    expect(error.message).toMatch(/^dataverse source: cannot connect: Failed to connect to 127\.0\.0\.1:\d+/);
    expect(error.message).not.toContain(token);
  });
});
