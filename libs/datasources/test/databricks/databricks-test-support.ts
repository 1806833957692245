import type { AccessToken, TokenCredential } from "@azure/identity";
import type { DataSourceConfig } from "@matoolkit/domain";
import { createDataSourceClient } from "../../src/create-data-source-client.ts";
import type { DataSourceClient } from "../../src/types.ts";
import type { DatabricksTiming } from "../../src/databricks/databricks-timing.ts";
import { startStatementApiStandIn, type StandIn, type StandInScenario } from "./statement-api-stand-in.ts";

/** Tests only: a Databricks client against a fresh stand-in, with short polls and backoffs. */
export const token = "fake-databricks-token-42";

export const config: DataSourceConfig = {
  type: "databricks",
  connection: "DATABRICKS_CONNECTION_STRING",
  warehouseId: "DATABRICKS_WAREHOUSE_ID",
  query: "SELECT upn, wave, enabled, migration_at FROM migration.members",
  primaryKey: "upn",
  batchTimeColumn: "migration_at",
  multiValuedColumns: [],
};

export const columns = [
  { name: "upn", type_name: "STRING" },
  { name: "wave", type_name: "INT" },
  { name: "enabled", type_name: "BOOLEAN" },
  { name: "migration_at", type_name: "TIMESTAMP" },
];

export const scopes: string[] = [];

export const credential: TokenCredential = {
  getToken: async (scope): Promise<AccessToken> => {
    scopes.push(String(scope));
    return { token, expiresOnTimestamp: Date.now() + 3_600_000 };
  },
};

export const row = (upn: string, wave: number): Array<string | null> => [
  upn,
  String(wave),
  "true",
  "2030-01-01T10:00:00.000Z",
];

/** `chunkCount` chunks of `rowsPerChunk` rows, members m0@…, m1@… in order. */
export function chunksOf(chunkCount: number, rowsPerChunk: number): Array<Array<Array<string | null>>> {
  return Array.from({ length: chunkCount }, (_, chunk) =>
    Array.from({ length: rowsPerChunk }, (_, index) =>
      row(`m${chunk * rowsPerChunk + index}@contoso.com`, chunk),
    ),
  );
}

export const fastTiming: Partial<DatabricksTiming> = {
  firstPollDelayMs: 20,
  maxPollDelayMs: 50,
  retry: { maxRetries: 5, baseDelayMs: 5, maxDelayMs: 30_000 },
};

export interface ClientOptions {
  readonly timeoutMs?: number;
  readonly warehouseStartTimeoutMs?: number;
  readonly timing?: Partial<DatabricksTiming>;
}

let current: StandIn | undefined;

export async function clientFor(
  scenario: StandInScenario,
  options: ClientOptions = {},
): Promise<{ client: DataSourceClient; standIn: StandIn }> {
  current = await startStatementApiStandIn(scenario);
  const env = { DATABRICKS_CONNECTION_STRING: current.url, DATABRICKS_WAREHOUSE_ID: "wh-1234" };
  const client = createDataSourceClient({
    env,
    credential,
    timeoutMs: options.timeoutMs,
    warehouseStartTimeoutMs: options.warehouseStartTimeoutMs,
    databricksTiming: options.timing ?? fastTiming,
  });
  return { client, standIn: current };
}

/** For afterEach: stops the stand-in of the test that just ran. */
export async function stopStandIn(): Promise<void> {
  await current?.close();
  current = undefined;
  scopes.length = 0;
}
