import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import {
  publishRunbook,
  setAutomationEnabled,
  type Db,
  type OverdueBehavior,
  type Runbook,
} from "@matoolkit/db";
import {
  isOrchestratorEventType,
  notificationPayloadSchema,
  orchestratorEventSchemas,
  topics,
  type OrchestratorEventType,
} from "@matoolkit/domain";
import { createDataSourceClient } from "@matoolkit/datasources";
import { createLogger } from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import type { BatchLifecycle } from "../src/batch-lifecycle.ts";
import { runSchedulerTick, type RunbookOutcome } from "../src/tick/run-scheduler-tick.ts";

/**
 * Test support (not exported): a real PostgreSQL holding both matoolkit's tables and the
 * `postgres` data sources' member tables, the real data source client (postgres and csv), and a
 * tick with a pinned clock.
 */
export const SOURCE_DB_ENV = "MATOOLKIT_SOURCE_SCHEDULER_TEST_DB";

export interface SchedulerHarness {
  readonly db: Db;
  /** Directory csv sources' relative paths resolve against. */
  readonly csvDir: string;
  /** batchCreated / phasesChanged calls, in order, as `created:<id>` / `phases:<id>`. */
  readonly lifecycleCalls: string[];
  tick(now: Date): Promise<RunbookOutcome[]>;
  /** The outcome of one runbook in a tick. */
  tickRunbook(name: string, now: Date): Promise<RunbookOutcome>;
  stop(): Promise<void>;
}

export async function startSchedulerHarness(): Promise<SchedulerHarness> {
  const database: TestDatabase = await createTestDatabase();
  const csvDir = await mkdtemp(path.join(tmpdir(), "scheduler-test-"));
  const dataSources = createDataSourceClient({ env: { [SOURCE_DB_ENV]: database.url }, baseDir: csvDir });
  const lifecycleCalls: string[] = [];
  const lifecycle: BatchLifecycle = {
    batchCreated: async (batchId) => void lifecycleCalls.push(`created:${batchId}`),
    phasesChanged: async (batchId) => void lifecycleCalls.push(`phases:${batchId}`),
  };
  const logger = createLogger({ level: "silent", name: "scheduler-test" });
  const tick = (now: Date) => runSchedulerTick({ db: database.db, logger, dataSources, lifecycle }, now);
  return {
    db: database.db,
    csvDir,
    lifecycleCalls,
    tick,
    async tickRunbook(name, now) {
      const outcome = (await tick(now)).find((candidate) => candidate.runbookName === name);
      if (outcome === undefined) throw new Error(`runbook ${name} was not processed`);
      return outcome;
    },
    async stop() {
      await database.drop();
      await rm(csvDir, { recursive: true, force: true });
    },
  };
}

export interface PhaseSpec {
  readonly name: string;
  readonly offset: string;
  /** `approval: required` (issue 30), with an `approval_timeout` when given. */
  readonly approval?: { readonly timeout?: string };
}

export interface RunbookSpec {
  readonly name: string;
  /** `column`: batch_time_column MigrationDate; `immediate`: batch_time immediate. */
  readonly batching?: "column" | "immediate";
  /** Default: a postgres source over the member table `members_<name>`. */
  readonly source?: { readonly csvPath: string } | { readonly query: string; readonly connection?: string };
  readonly init?: boolean;
  readonly phases?: readonly PhaseSpec[];
}

export const defaultPhases: readonly PhaseSpec[] = [
  { name: "pre-checks", offset: "T-5d" },
  { name: "cutover", offset: "T-0" },
];

export function memberTable(runbookName: string): string {
  return `members_${runbookName.replace(/[^a-z0-9]/gu, "_")}`;
}

export function runbookYaml(spec: RunbookSpec): string {
  const source =
    spec.source !== undefined && "csvPath" in spec.source
      ? `  type: csv\n  path: ${spec.source.csvPath}\n`
      : `  type: postgres\n  connection: ${spec.source?.connection ?? SOURCE_DB_ENV}\n  query: >-\n    ${
          spec.source?.query ??
          `SELECT upn AS "UserPrincipalName", display_name AS "DisplayName", migration_date AS "MigrationDate", proxies AS "ProxyAddresses" FROM ${memberTable(spec.name)} ORDER BY upn`
        }\n`;
  const batching =
    (spec.batching ?? "column") === "column"
      ? "  batch_time_column: MigrationDate\n"
      : "  batch_time: immediate\n";
  const init = spec.init
    ? 'init:\n  - name: create-group\n    worker_id: worker-01\n    function: Test-Echo\n    params:\n      BatchId: "{{_batch_id}}"\n'
    : "";
  const phases = (spec.phases ?? defaultPhases)
    .map(
      (phase) =>
        `  - name: ${phase.name}\n    offset: ${phase.offset}\n${approvalLines(phase)}    steps:\n` +
        `      - name: ${phase.name}-step\n        worker_id: worker-01\n        function: Test-Echo\n` +
        `        params:\n          Upn: "{{UserPrincipalName}}"\n`,
    )
    .join("");
  return (
    `name: ${spec.name}\ndata_source:\n${source}  primary_key: UserPrincipalName\n${batching}` +
    "  multi_valued_columns:\n    - name: ProxyAddresses\n      format: semicolon_delimited\n" +
    `${init}phases:\n${phases}`
  );
}

function approvalLines(phase: PhaseSpec): string {
  if (phase.approval === undefined) return "";
  const timeout =
    phase.approval.timeout === undefined ? "" : `    approval_timeout: ${phase.approval.timeout}\n`;
  return `    approval: required\n${timeout}`;
}

export async function publish(
  db: Db,
  spec: RunbookSpec,
  options: { overdueBehavior?: OverdueBehavior; rerunInit?: boolean; automation?: boolean } = {},
): Promise<Runbook> {
  const runbook = await publishRunbook(db, {
    name: spec.name,
    yamlContent: runbookYaml(spec),
    overdueBehavior: options.overdueBehavior ?? "rerun",
    rerunInit: options.rerunInit ?? false,
  });
  if (options.automation ?? true) {
    await setAutomationEnabled(db, { runbookName: spec.name, enabled: true, actor: "test", at: new Date() });
  }
  return runbook;
}

export interface SourceMember {
  readonly upn: string;
  readonly displayName?: string;
  readonly migrationDate?: string | null;
  readonly proxies?: string;
}

/** The postgres source's member table for a runbook, replaced by `members`. */
export async function setSourceMembers(db: Db, runbookName: string, members: readonly SourceMember[]) {
  const table = sql.table(memberTable(runbookName));
  await sql`CREATE TABLE IF NOT EXISTS ${table} (
    upn text PRIMARY KEY, display_name text, migration_date timestamptz, proxies text
  )`.execute(db);
  await sql`DELETE FROM ${table}`.execute(db);
  for (const member of members) {
    await sql`INSERT INTO ${table} VALUES (${member.upn}, ${member.displayName ?? member.upn},
      ${member.migrationDate ?? null}, ${member.proxies ?? null})`.execute(db);
  }
}

export async function writeCsv(dir: string, file: string, lines: readonly string[]): Promise<void> {
  await writeFile(path.join(dir, file), `${lines.join("\n")}\n`);
}

export interface SentMessage {
  readonly type: OrchestratorEventType;
  readonly messageId: string;
  readonly body: Record<string, unknown>;
}

/**
 * Outbox rows queued since the last call, checked against their wire schema, then removed. The
 * orchestrator events are returned; notifications (a gate's `phase.awaiting_approval`, queued for
 * the email notifier even without a webhook) are checked and left out.
 */
export async function takeOutbox(db: Db): Promise<SentMessage[]> {
  const rows = await db.deleteFrom("outbox").returningAll().execute();
  return rows
    .sort((a, b) => a.id - b.id)
    .filter((row) => {
      if (row.topic !== topics.notifications) return true;
      notificationPayloadSchema.parse(row.body);
      return false;
    })
    .map((row) => {
      const type = (row.properties as Record<string, string>).MessageType;
      if (!isOrchestratorEventType(type)) throw new Error(`unknown MessageType ${String(type)}`);
      orchestratorEventSchemas[type].parse(row.body);
      return { type, messageId: row.messageId, body: row.body as Record<string, unknown> };
    });
}

export async function batchesOf(db: Db, runbookName: string) {
  return db
    .selectFrom("batches")
    .innerJoin("runbooks", "runbooks.id", "batches.runbookId")
    .selectAll("batches")
    .select("runbooks.version as runbookVersion")
    .where("runbooks.name", "=", runbookName)
    .orderBy("batches.batchStartTime")
    .orderBy("batches.id")
    .execute();
}

export async function membersOf(db: Db, batchId: number) {
  return db.selectFrom("batchMembers").selectAll().where("batchId", "=", batchId).orderBy("id").execute();
}

export async function phasesOf(db: Db, batchId: number) {
  return db
    .selectFrom("phaseExecutions")
    .selectAll()
    .where("batchId", "=", batchId)
    .orderBy("runbookVersion")
    .orderBy("sequence")
    .execute();
}

/** Each test sees only its own runbooks: earlier tests' runbooks stop being ticked. */
export async function deactivateAllRunbooks(db: Db): Promise<void> {
  await db.updateTable("runbooks").set({ isActive: false }).where("isActive", "=", true).execute();
  await db.deleteFrom("outbox").execute();
}

export const at = (iso: string) => new Date(iso);
