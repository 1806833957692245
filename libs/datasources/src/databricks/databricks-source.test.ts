import type { TokenCredential } from "@azure/identity";
import { afterEach, describe, expect, it } from "vitest";
import { azureDatabricksScope, createDataSourceClient, DataSourceError } from "../index.ts";
import { failureOf } from "../../test/failure-of.ts";
import {
  clientFor,
  columns,
  config,
  credential,
  row,
  scopes,
  stopStandIn,
  token,
} from "../../test/databricks/databricks-test-support.ts";

afterEach(stopStandIn);

describe("databricks data source (SQL Statement Execution API 2.0)", () => {
  it("submits the statement with a Bearer token, reads EXTERNAL_LINKS and maps the rows by column name", async () => {
    const { client, standIn } = await clientFor({
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
    expect(standIn.requests).toMatchObject([
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
          disposition: "EXTERNAL_LINKS",
        },
      },
    ]);
    expect(standIn.downloads).toMatchObject([{ path: "/results/1.json", authorization: undefined }]);
  });

  it("keeps a small preview (a limit of a few rows) INLINE: no storage download", async () => {
    const { client, standIn } = await clientFor({
      states: ["SUCCEEDED"],
      columns,
      chunks: [[row("a@contoso.com", 1), row("b@contoso.com", 2)]],
    });
    expect((await client.query(config, { limit: 20 })).map((each) => each.upn)).toEqual([
      "a@contoso.com",
      "b@contoso.com",
    ]);
    expect(standIn.requests[0]?.body).toMatchObject({ disposition: "INLINE", row_limit: 20 });
    expect(standIn.downloads).toEqual([]);
  });

  it("polls while PENDING and RUNNING, then follows next_chunk_internal_link to every chunk's link", async () => {
    const { client, standIn } = await clientFor({
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
    expect(standIn.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      "POST /api/2.0/sql/statements",
      "GET /api/2.0/sql/statements/01ef-standin-statement",
      "GET /api/2.0/sql/statements/01ef-standin-statement",
      "GET /api/2.0/sql/statements/01ef-standin-statement/result/chunks/1?row_offset=2",
      "GET /api/2.0/sql/statements/01ef-standin-statement/result/chunks/2?row_offset=3",
    ]);
    expect(standIn.requests.every((request) => request.authorization === `Bearer ${token}`)).toBe(true);
    expect(standIn.downloads).toHaveLength(3);
  });

  it("asks for a row limit and stops reading chunks once it has enough rows", async () => {
    const { client, standIn } = await clientFor({
      states: ["SUCCEEDED"],
      columns,
      chunks: [
        [row("a@contoso.com", 1), row("b@contoso.com", 1)],
        [row("c@contoso.com", 2)],
        [row("d@contoso.com", 3)],
      ],
    });
    const { requests } = standIn;
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
    const { client, standIn } = await clientFor({ states: ["PENDING", "RUNNING"] }, { timeoutMs: 400 });
    const { requests } = standIn;
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
    const { client, standIn } = await clientFor({ states: ["RUNNING"] });
    const { requests } = standIn;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    await expect(client.query(config, { signal: controller.signal })).rejects.toThrow(
      "databricks source: query aborted",
    );
    expect(requests.some((request) => request.path.endsWith("/cancel"))).toBe(true);
  });

  it("reports an HTTP error with the API's error code and message, at once", async () => {
    const { client, standIn } = await clientFor({
      states: ["SUCCEEDED"],
      submitResponse: {
        status: 403,
        json: { error_code: "PERMISSION_DENIED", message: "no CAN_USE on warehouse" },
      },
    });
    await expect(client.query(config)).rejects.toThrow(
      "databricks source: HTTP 403 from POST /api/2.0/sql/statements: PERMISSION_DENIED no CAN_USE on warehouse",
    );
    expect(standIn.requests).toHaveLength(1);
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
