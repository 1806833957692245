import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { awsRequest } from "./aws-signed-request.ts";
import { freePort } from "./free-port.ts";
import { startManagedProcess, waitUntilReady, type ManagedProcess } from "./managed-process.ts";

/**
 * dynalite (npm `dynalite`), a DynamoDB emulator on LevelDB, on a free loopback port with its
 * data in `dataDir`. What it does not implement (its readme's TODO list and actions/ folder):
 * TransactWriteItems / TransactGetItems, UpdateTimeToLive (so TTL cannot be switched on for a
 * table), DynamoDB Streams.
 */
export interface HarnessDynalite {
  readonly endpoint: string;
  readonly region: string;
  readonly process: ManagedProcess;
  /** A table as components/aws/statestore.yaml asks for: partition key `key` (string). */
  createStateTable(table: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startDynalite(options: {
  readonly dataDir: string;
  readonly region: string;
}): Promise<HarnessDynalite> {
  mkdirSync(options.dataDir, { recursive: true });
  const port = await freePort();
  const cli = createRequire(import.meta.url).resolve("dynalite/cli.js");
  const process = startManagedProcess({
    name: `dynalite :${port}`,
    command: globalThis.process.execPath,
    args: [cli, "--host", "127.0.0.1", "--port", String(port), "--path", join(options.dataDir, "db")],
    logFile: join(options.dataDir, "dynalite.log"),
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const call = (action: string, params: Record<string, unknown>) =>
    awsRequest({
      endpoint,
      region: options.region,
      service: "dynamodb",
      protocol: { json: `DynamoDB_20120810.${action}` },
      params,
    });
  await waitUntilReady(process, async () => (await call("ListTables", {})).status === 200, {
    timeoutMs: 20_000,
    what: "answering ListTables",
  });
  return {
    endpoint,
    region: options.region,
    process,
    async createStateTable(table) {
      const created = await call("CreateTable", {
        TableName: table,
        AttributeDefinitions: [{ AttributeName: "key", AttributeType: "S" }],
        KeySchema: [{ AttributeName: "key", KeyType: "HASH" }],
        BillingMode: "PAY_PER_REQUEST",
      });
      if (created.status !== 200) throw new Error(`dynalite CreateTable ${table}: ${created.body}`);
      // A new table is CREATING for a moment (as on AWS); writes to it fail until it is ACTIVE.
      await waitUntilReady(
        process,
        async () => {
          const described = await call("DescribeTable", { TableName: table });
          return (
            (JSON.parse(described.body) as { Table?: { TableStatus?: string } }).Table?.TableStatus ===
            "ACTIVE"
          );
        },
        { timeoutMs: 20_000, what: `showing table ${table} ACTIVE` },
      );
    },
    stop: () => process.stop(),
  };
}
