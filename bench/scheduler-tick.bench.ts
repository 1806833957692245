/**
 * Scheduler tick benchmark (issue 4), run on demand: `npm run bench:scheduler`.
 *
 * For 100,000 and then 200,000 source rows (each size in a child process of its own, so peak RSS
 * is that size's): a fresh database on DATABASE_URL's server, a `postgres` source table of that
 * many members in one batch time, then three ticks: the one creating the batch, one with no
 * change, and one with 1% churn (0.5% of members leave, 0.5% join, 1% change an attribute).
 * Prints wall time, SQL statements and peak RSS per tick. Targets: <= 10 s and <= 300 MB at
 * 100k; 200k <= 2.2x the 100k time.
 *
 * Every size runs twice: with V8's default heap sizing, and with the old generation capped at
 * 256 MB (`--max-old-space-size=256`, what a scheduler container should run with). By default V8
 * postpones full collections until the heap is far above the live data, so the previous tick's
 * garbage (the source's rows) is still resident when the next tick starts; the cap shows the
 * memory a tick actually needs.
 *
 * Statements are counted by wrapping pg's Client#query (pg_stat_statements needs a preloaded
 * library the machine's server does not have): matoolkit's own statements, and separately the
 * data source's (its connection's application_name).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { createDataSourceClient } from "@matoolkit/datasources";
import { createDb, migrateToLatest, publishRunbook, setAutomationEnabled } from "@matoolkit/db";
import { createLogger } from "@matoolkit/runtime";
import { runSchedulerTick } from "@matoolkit/scheduler";

const SIZES = [100_000, 200_000];
const HEAPS: readonly { readonly label: string; readonly flags: readonly string[] }[] = [
  { label: "default", flags: [] },
  { label: "cap 256MB", flags: ["--max-old-space-size=256"] },
];
const SOURCE_ENV = "MATOOLKIT_SOURCE_BENCH_DB";
const databaseUrl = process.env.DATABASE_URL;
if (databaseUrl === undefined) {
  console.error("Set DATABASE_URL to a PostgreSQL server, e.g. postgres://postgres@127.0.0.1:5432/test");
  process.exit(2);
}

interface TickFigures {
  readonly tick: string;
  readonly ms: number;
  readonly statements: number;
  readonly sourceStatements: number;
  readonly peakRssMb: number;
  readonly summary: string;
}

const rowsArg = process.argv.indexOf("--rows");
if (rowsArg === -1) {
  runEverySize();
} else {
  await benchOneSize(Number(process.argv[rowsArg + 1]), databaseUrl);
}

function runEverySize(): void {
  console.log("heap       rows     tick           wall ms  statements  source stmts  peak RSS MB  result");
  for (const heap of HEAPS) {
    const results = new Map<number, TickFigures[]>();
    for (const rows of SIZES) {
      const args = [
        ...heap.flags,
        ...process.execArgv,
        fileURLToPath(import.meta.url),
        "--rows",
        String(rows),
      ];
      const child = spawnSync(process.execPath, args, {
        encoding: "utf8",
        env: process.env,
        stdio: ["ignore", "pipe", "inherit"],
      });
      if (child.status !== 0) throw new Error(`benchmark at ${rows} rows failed (exit ${child.status})`);
      const ticks = JSON.parse(child.stdout.trim().split("\n").pop() ?? "[]") as TickFigures[];
      results.set(rows, ticks);
      for (const t of ticks) {
        console.log(
          [
            heap.label.padEnd(10),
            String(rows).padEnd(8),
            t.tick.padEnd(14),
            String(t.ms).padStart(7),
            String(t.statements).padStart(10),
            String(t.sourceStatements).padStart(12),
            String(t.peakRssMb).padStart(11),
            t.summary,
          ].join(" "),
        );
      }
    }
    const [small, large] = SIZES.map((rows) => results.get(rows) ?? []);
    for (const [index, tick] of (small ?? []).entries()) {
      const ratio = (large?.[index]?.ms ?? 0) / Math.max(1, tick.ms);
      console.log(`${heap.label}: time ${SIZES[1]} / ${SIZES[0]} rows, "${tick.tick}": ${ratio.toFixed(2)}x`);
    }
  }
}

async function benchOneSize(rows: number, serverUrl: string): Promise<void> {
  const name = `matoolkit_bench_${rows}_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = createDb({
    connectionString: url.toString(),
    maxConnections: 4,
    applicationName: "matoolkit-bench",
  });
  const counter = countStatements();
  try {
    await migrateToLatest(db);
    const source = new pg.Client({ connectionString: url.toString() });
    await source.connect();
    await source.query(`
      CREATE TABLE source_members (
        upn text PRIMARY KEY, display_name text, department text, object_type text,
        migration_date timestamptz NOT NULL, proxies text)`);
    await source.query(
      `INSERT INTO source_members
       SELECT 'user' || i || '@contoso.test', 'User ' || i, 'Dept ' || (i % 50), 'EntraUser',
              '2030-06-10T09:00:00Z', 'smtp:user' || i || '@contoso.test;smtp:u' || i || '@fabrikam.test;x500:/o=' || i
       FROM generate_series(1, $1) AS i`,
      [rows],
    );
    await source.query("ANALYZE source_members");
    await publishRunbook(db, {
      name: "bench",
      yamlContent: runbookYaml(),
      overdueBehavior: "rerun",
      rerunInit: false,
    });
    await setAutomationEnabled(db, { runbookName: "bench", enabled: true, actor: "bench", at: new Date() });
    const dataSources = createDataSourceClient({ env: { [SOURCE_ENV]: url.toString() }, timeoutMs: 600_000 });
    const logger = createLogger({ level: "silent", name: "bench" });
    const now = new Date("2030-06-01T12:00:00Z");

    const figures: TickFigures[] = [];
    const tick = async (label: string) => {
      counter.reset();
      const started = performance.now();
      const [outcome] = await runSchedulerTick({ db, logger, dataSources }, now);
      const ms = Math.round(performance.now() - started);
      if (outcome === undefined || !outcome.ok) throw new Error(`tick failed: ${JSON.stringify(outcome)}`);
      figures.push({
        tick: label,
        ms,
        statements: counter.app,
        sourceStatements: counter.source,
        peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
        summary: `rows=${outcome.sourceRows} created=${outcome.createdBatchIds.length} added=${outcome.membersAdded} removed=${outcome.membersRemoved} refreshed=${outcome.membersRefreshed}`,
      });
    };

    await tick("create batch");
    await tick("no change");
    const half = Math.round(rows * 0.005);
    await source.query(
      "DELETE FROM source_members WHERE upn IN (SELECT upn FROM source_members ORDER BY upn LIMIT $1)",
      [half],
    );
    await source.query(
      `INSERT INTO source_members
       SELECT 'new' || i || '@contoso.test', 'New ' || i, 'Dept 1', 'EntraUser', '2030-06-10T09:00:00Z', NULL
       FROM generate_series(1, $1) AS i`,
      [half],
    );
    await source.query(
      "UPDATE source_members SET department = 'Moved' WHERE upn IN (SELECT upn FROM source_members ORDER BY upn DESC LIMIT $1)",
      [half * 2],
    );
    await source.end();
    await tick("1% churn");
    console.log(JSON.stringify(figures));
  } finally {
    await db.destroy();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

function runbookYaml(): string {
  return `name: bench
data_source:
  type: postgres
  connection: ${SOURCE_ENV}
  query: SELECT upn AS "UserPrincipalName", display_name AS "DisplayName", department AS "Department", object_type AS "ObjectType", migration_date AS "MigrationDate", proxies AS "ProxyAddresses" FROM source_members
  primary_key: UserPrincipalName
  batch_time_column: MigrationDate
  multi_valued_columns:
    - name: ProxyAddresses
      format: semicolon_delimited
phases:
  - name: pre-checks
    offset: T-5d
    steps:
      - name: check
        worker_id: worker-01
        function: Test-Echo
  - name: cutover
    offset: T-0
    steps:
      - name: move
        worker_id: worker-01
        function: Test-Echo
`;
}

/** Counts statements per connection kind by wrapping Client#query (every pool client is a Client). */
function countStatements() {
  const counts = { app: 0, source: 0 };
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (
    this: pg.Client & { connectionParameters?: { application_name?: string } },
    ...args: unknown[]
  ) {
    if (this.connectionParameters?.application_name === "matoolkit-datasource") counts.source += 1;
    else counts.app += 1;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return {
    get app() {
      return counts.app;
    },
    get source() {
      return counts.source;
    },
    reset() {
      counts.app = 0;
      counts.source = 0;
    },
  };
}
