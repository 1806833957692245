import type { AccessToken, TokenCredential } from "@azure/identity";
import { afterEach, describe, expect, it } from "vitest";
import type { DataSourceConfig } from "@matoolkit/domain";
import { azureDatabricksScope, createDataSourceClient, DataSourceError } from "../index.ts";
import { failureOf } from "../failure-of.ts";
import { startStatementApiStandIn, type StandIn, type StandInScenario } from "./statement-api-stand-in.ts";

const token = "fake-databricks-token-42";
const config: DataSourceConfig = {
  type: "databricks",
  connection: "DATABRICKS_CONNECTION_STRING",
  warehouseId: "DATABRICKS_WAREHOUSE_ID",
  query: "SELECT upn, wave, enabled, migration_at FROM migration.members",
  primaryKey: "upn",
  batchTimeColumn: "migration_at",
  multiValuedColumns: [],
};
const columns = [
  { name: "upn", type_name: "STRING" },
  { name: "wave", type_name: "INT" },
  { name: "enabled", type_name: "BOOLEAN" },
  { name: "migration_at", type_name: "TIMESTAMP" },
];

let standIn: StandIn | undefined;
const scopes: string[] = [];
const credential: TokenCredential = {
  getToken: async (scope): Promise<AccessToken> => {
    scopes.push(String(scope));
    return { token, expiresOnTimestamp: Date.now() + 3_600_000 };
  },
};

async function clientFor(scenario: StandInScenario, timeoutMs?: number) {
  standIn = await startStatementApiStandIn(scenario);
  const env = { DATABRICKS_CONNECTION_STRING: standIn.url, DATABRICKS_WAREHOUSE_ID: "wh-1234" };
  return { client: createDataSourceClient({ env, credential, timeoutMs }), requests: standIn.requests };
}

const row = (upn: string, wave: number): Array<string | null> => [
  upn,
  String(wave),
  "true",
  "2030-01-01T10:00:00.000Z",
];

afterEach(async () => {
  await standIn?.close();
  standIn = undefined;
  scopes.length = 0;
});

describe("databricks data source (SQL Statement Execution API 2.0)", () => {
  it("submits the statement with a Bearer token and maps an inline result by column name", async () => {
    const { client, requests } = await clientFor({
      states: ["SUCCEEDED"],
      columns,
      chunks: [
        [
          ["a@contoso.com", "1", "true", "2030-01-01T10:00:00.000Z"],
          ["b@contoso.com", null, "false", null],
        ],
      ],
    });
    expect(await client.query(config)).toEqual([
      { upn: "a@contoso.com", wave: 1, enabled: true, migration_at: "2030-01-01T10:00:00.000Z" },
      { upn: "b@contoso.com", wave: null, enabled: false, migration_at: null },
    ]);
    expect(scopes).toEqual([azureDatabricksScope]);
    expect(requests).toEqual([
      {
        method: "POST",
        path: "/api/2.0/sql/statements",
        authorization: `Bearer ${token}`,
        body: {
          statement: config.query,
          warehouse_id: "wh-1234",
          wait_timeout: "30s",
          on_wait_timeout: "CONTINUE",
          format: "JSON_ARRAY",
          disposition: "INLINE",
        },
      },
    ]);
  });

  it("polls while PENDING and RUNNING, then fetches every chunk through next_chunk_internal_link", async () => {
    const { client, requests } = await clientFor({
      states: ["PENDING", "RUNNING", "SUCCEEDED"],
      columns,
      chunks: [
        [row("a@contoso.com", 1), row("b@contoso.com", 1)],
        [row("c@contoso.com", 2)],
        [row("d@contoso.com", 3)],
      ],
    });
    const rows = await client.query(config);
    expect(rows.map((each) => [each.upn, each.wave])).toEqual([
      ["a@contoso.com", 1],
      ["b@contoso.com", 1],
      ["c@contoso.com", 2],
      ["d@contoso.com", 3],
    ]);
    expect(requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      "POST /api/2.0/sql/statements",
      "GET /api/2.0/sql/statements/01ef-standin-statement",
      "GET /api/2.0/sql/statements/01ef-standin-statement",
      "GET /api/2.0/sql/statements/01ef-standin-statement/result/chunks/1?row_offset=2",
      "GET /api/2.0/sql/statements/01ef-standin-statement/result/chunks/2?row_offset=3",
    ]);
    expect(requests.every((request) => request.authorization === `Bearer ${token}`)).toBe(true);
  });

  it("asks for a row limit and stops reading chunks once it has enough rows", async () => {
    const { client, requests } = await clientFor({
      states: ["SUCCEEDED"],
      columns,
      chunks: [
        [row("a@contoso.com", 1), row("b@contoso.com", 1)],
        [row("c@contoso.com", 2)],
        [row("d@contoso.com", 3)],
      ],
    });
    const rows = await client.query(config, { limit: 3 });
    expect(rows.map((each) => each.upn)).toEqual(["a@contoso.com", "b@contoso.com", "c@contoso.com"]);
    expect((requests[0]?.body as { row_limit?: number }).row_limit).toBe(3);
    expect(requests).toHaveLength(2);
  });

  it("fails with the API's error message, without literals or the token", async () => {
    const { client } = await clientFor({
      states: ["RUNNING", "FAILED"],
      error: {
        error_code: "BAD_REQUEST",
        message: `[CAST_INVALID_INPUT] The value 'jdoe' of the type "STRING" cannot be cast to "INT" (auth ${token})`,
      },
    });
    const error = await failureOf(client.query(config));
    expect(error).toBeInstanceOf(DataSourceError);
    expect(error.message).toBe(
      `databricks source: statement FAILED: BAD_REQUEST [CAST_INVALID_INPUT] The value '…' of the type "STRING" cannot be cast to "INT" (auth [redacted])`,
    );
  });

  it("cancels the statement when the query times out", async () => {
    const { client, requests } = await clientFor({ states: ["PENDING", "RUNNING"] }, 400);
    await expect(client.query(config)).rejects.toThrow("databricks source: query timed out after 0.4 s");
    const cancel = requests.find((request) => request.path.endsWith("/cancel"));
    expect(cancel).toMatchObject({
      method: "POST",
      path: "/api/2.0/sql/statements/01ef-standin-statement/cancel",
      authorization: `Bearer ${token}`,
    });
    expect((requests[0]?.body as { wait_timeout: string }).wait_timeout).toBe("0s");
  });

  it("cancels the statement when the caller aborts", async () => {
    const { client, requests } = await clientFor({ states: ["RUNNING"] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    await expect(client.query(config, { signal: controller.signal })).rejects.toThrow(
      "databricks source: query aborted",
    );
    expect(requests.some((request) => request.path.endsWith("/cancel"))).toBe(true);
  });

  it("reports an HTTP error with the API's error code and message", async () => {
    const { client } = await clientFor({
      states: ["SUCCEEDED"],
      submitResponse: {
        status: 403,
        json: { error_code: "PERMISSION_DENIED", message: "no CAN_USE on warehouse" },
      },
    });
    await expect(client.query(config)).rejects.toThrow(
      "databricks source: HTTP 403 from POST /api/2.0/sql/statements: PERMISSION_DENIED no CAN_USE on warehouse",
    );
  });

  it("names a missing warehouse variable before asking for a token", async () => {
    const client = createDataSourceClient({
      env: { DATABRICKS_CONNECTION_STRING: "adb-1.azuredatabricks.net" },
      credential,
    });
    await expect(client.query(config)).rejects.toThrow(
      "databricks source: environment variable DATABRICKS_WAREHOUSE_ID (data_source.warehouse_id) is not set",
    );
    expect(scopes).toEqual([]);
  });

  it("never sends the token over plain http to a remote host", async () => {
    const calls: unknown[] = [];
    const recordingFetch = (async (...args: unknown[]) => {
      calls.push(args);
      throw new Error("no network in tests");
    }) as typeof fetch;
    const env = {
      DATABRICKS_CONNECTION_STRING: "http://adb-1.azuredatabricks.net",
      DATABRICKS_WAREHOUSE_ID: "wh",
    };
    const client = createDataSourceClient({ env, credential, fetch: recordingFetch });
    await expect(client.query(config)).rejects.toThrow(
      "databricks source: environment variable DATABRICKS_CONNECTION_STRING (data_source.connection) is not an https workspace URL",
    );
    expect(calls).toEqual([]);
  });

  it("names the credential's error class when no token can be had, not its text", async () => {
    const failing: TokenCredential = {
      getToken: async () => {
        throw Object.assign(new Error("ManagedIdentityCredential: secret=hunter2 at /var/run"), {
          name: "CredentialUnavailableError",
        });
      },
    };
    const env = { DATABRICKS_CONNECTION_STRING: "adb-1.azuredatabricks.net", DATABRICKS_WAREHOUSE_ID: "wh" };
    const error = await failureOf(createDataSourceClient({ env, credential: failing }).query(config));
    expect(error.message).toBe(
      `databricks source: could not get an Entra access token for ${azureDatabricksScope} (CredentialUnavailableError)`,
    );
  });
});
