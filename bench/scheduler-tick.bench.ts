/**
 * Scheduler tick benchmark (issues 4 and 17), run on demand: `npm run bench:scheduler`.
 *
 * For each size (each in a child process of its own, so peak RSS is that size's): a fresh
 * database on DATABASE_URL's server, a source of that many members in one batch time, then three
 * ticks: the one creating the batch, one with no change, and one with 1% churn (0.5% of members
 * leave, 0.5% join, 1% change an attribute). Prints wall time, the process's own CPU time, SQL
 * statements and peak RSS (the process's maximum so far) per tick. Target (issue 17): each tick
 * <= 10 s and peak RSS <= 300 MB at 1,000,000 rows, with V8's default heap sizing.
 *
 * Knobs (environment):
 * - BENCH_ROWS: sizes, comma-separated (default 100000,200000; `BENCH_ROWS=1000000` for the
 *   target size, which takes a few minutes with the source's setup).
 * - BENCH_SOURCE: `postgres` (default: a table on the same server, read by the `postgres` data
 *   source) or `csv` (the same members exported to a CSV file, read by the `csv` data source).
 * - BENCH_OLD_SPACE_MB: also run every size with V8's old generation capped at that size
 *   (`--max-old-space-size`), the memory a tick needs rather than what V8 lets accumulate.
 * - BENCH_TRACE=1: on stderr, statements slower than 50 ms with their time, and per tick the
 *   sampled peak RSS split into V8's heap and the memory outside it.
 *
 * The RSS before the first tick (printed on stderr) is the floor: modules, the tsx loader,
 * pools. Peak RSS includes whatever the data source holds: a source that loads its whole result
 * before yielding a row (the `postgres` one, at the time of issue 17) costs its rows' memory
 * on top of the tick's.
 *
 * Statements are counted by wrapping pg's Client#query (pg_stat_statements needs a preloaded
 * library the machine's server does not have): matoolkit's own statements, and separately the
 * data source's (its connection's application_name).
 */
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { createDataSourceClient } from "@matoolkit/datasources";
import { createDb, migrateToLatest, publishRunbook, setAutomationEnabled } from "@matoolkit/db";
import { createLogger } from "@matoolkit/runtime";
import { runSchedulerTick } from "@matoolkit/scheduler";

const SIZES = (process.env.BENCH_ROWS ?? "100000,200000").split(",").map((size) => Number(size.trim()));
const SOURCE: "postgres" | "csv" = process.env.BENCH_SOURCE === "csv" ? "csv" : "postgres";
const oldSpaceMb = process.env.BENCH_OLD_SPACE_MB;
const HEAPS: readonly { readonly label: string; readonly flags: readonly string[] }[] = [
  { label: "default", flags: [] },
  ...(oldSpaceMb === undefined
    ? []
    : [{ label: `cap ${oldSpaceMb}MB`, flags: [`--max-old-space-size=${oldSpaceMb}`] }]),
];
const SOURCE_ENV = "MATOOLKIT_SOURCE_BENCH_DB";
const databaseUrl = process.env.DATABASE_URL;
if (databaseUrl === undefined) {
  console.error("Set DATABASE_URL to a PostgreSQL server, e.g. postgres://postgres@127.0.0.1:5432/test");
  process.exit(2);
}
if (SIZES.some((size) => !Number.isSafeInteger(size) || size < 200)) {
  console.error("BENCH_ROWS: comma-separated row counts of at least 200, e.g. 100000,1000000");
  process.exit(2);
}

interface TickFigures {
  readonly tick: string;
  readonly ms: number;
  readonly cpuMs: number;
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
  console.log(`source: ${SOURCE}`);
  console.log(
    "heap       rows     tick           wall ms  cpu ms  statements  source stmts  peak RSS MB  result",
  );
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
        maxBuffer: 16 * 1024 * 1024,
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
            String(t.cpuMs).padStart(7),
            String(t.statements).padStart(10),
            String(t.sourceStatements).padStart(12),
            String(t.peakRssMb).padStart(11),
            t.summary,
          ].join(" "),
        );
      }
    }
    for (let index = 1; index < SIZES.length; index++) {
      const [small, large] = [SIZES[index - 1] as number, SIZES[index] as number];
      for (const [tickIndex, tick] of (results.get(small) ?? []).entries()) {
        const ratio = (results.get(large)?.[tickIndex]?.ms ?? 0) / Math.max(1, tick.ms);
        console.log(`${heap.label}: time ${large} / ${small} rows, "${tick.tick}": ${ratio.toFixed(2)}x`);
      }
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
  const csvDir = await mkdtemp(path.join(tmpdir(), "scheduler-bench-"));
  const counter = countStatements();
  try {
    await migrateToLatest(db);
    const source = new pg.Client({ connectionString: url.toString() });
    // The DROP DATABASE below ends this connection if a step failed before it was closed.
    source.on("error", () => undefined);
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
    if (SOURCE === "csv") await exportCsv(source, path.join(csvDir, "members.csv"));
    await publishRunbook(db, {
      name: "bench",
      yamlContent: runbookYaml(),
      overdueBehavior: "rerun",
      rerunInit: false,
    });
    await setAutomationEnabled(db, { runbookName: "bench", enabled: true, actor: "bench", at: new Date() });
    const dataSources = createDataSourceClient({
      env: { [SOURCE_ENV]: url.toString() },
      baseDir: csvDir,
      timeoutMs: 600_000,
    });
    const logger = createLogger({ level: "silent", name: "bench" });
    const now = new Date("2030-06-01T12:00:00Z");

    const figures: TickFigures[] = [];
    // What the process holds before any tick (modules, pools, the source's setup): the floor.
    console.error(
      `rows ${rows}: RSS before the first tick ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB`,
    );
    const tick = async (label: string) => {
      counter.reset();
      const memory = sampleMemory();
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      const [outcome] = await runSchedulerTick({ db, logger, dataSources }, now);
      const ms = Math.round(performance.now() - started);
      const cpu = process.cpuUsage(cpuBefore);
      memory.stop(label);
      if (outcome === undefined || !outcome.ok) throw new Error(`tick failed: ${JSON.stringify(outcome)}`);
      figures.push({
        tick: label,
        ms,
        cpuMs: Math.round((cpu.user + cpu.system) / 1000),
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
    if (SOURCE === "csv") await exportCsv(source, path.join(csvDir, "members.csv"));
    await source.end();
    await tick("1% churn");
    console.log(JSON.stringify(figures));
  } finally {
    await db.destroy();
    await rm(csvDir, { recursive: true, force: true });
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/**
 * With BENCH_TRACE: process.memoryUsage() every 20 ms during a tick; prints the sample with the
 * highest RSS, split into V8's heap and the memory outside it (buffers, code, the loader).
 */
function sampleMemory(): { stop(label: string): void } {
  if (process.env.BENCH_TRACE !== "1") return { stop: () => undefined };
  let peak = process.memoryUsage();
  const timer = setInterval(() => {
    const sample = process.memoryUsage();
    if (sample.rss > peak.rss) peak = sample;
  }, 20);
  return {
    stop(label) {
      clearInterval(timer);
      const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`;
      console.error(
        `${label}: sampled peak RSS ${mb(peak.rss)} (V8 heap ${mb(peak.heapTotal)} of which used ${mb(peak.heapUsed)}, ` +
          `external ${mb(peak.external)}, array buffers ${mb(peak.arrayBuffers)})`,
      );
    },
  };
}

/** The source table as the csv source reads it (a cursor, so the bench holds no more than the tick). */
async function exportCsv(source: pg.Client, file: string): Promise<void> {
  const out = createWriteStream(file);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, "drain");
  };
  await write("UserPrincipalName,DisplayName,Department,ObjectType,MigrationDate,ProxyAddresses\n");
  await source.query("BEGIN");
  await source.query(`DECLARE members NO SCROLL CURSOR FOR
    SELECT upn, display_name, department, object_type,
           to_char(migration_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS migration_date, proxies
    FROM source_members`);
  for (;;) {
    const { rows } = await source.query<Record<string, string | null>>("FETCH 10000 FROM members");
    if (rows.length === 0) break;
    await write(rows.map((row) => `${Object.values(row).map(csvField).join(",")}\n`).join(""));
  }
  await source.query("COMMIT");
  out.end();
  await once(out, "finish");
}

function csvField(value: string | null): string {
  if (value === null) return "";
  return /[",\n]/u.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function runbookYaml(): string {
  const source =
    SOURCE === "csv"
      ? "  type: csv\n  path: members.csv\n"
      : `  type: postgres
  connection: ${SOURCE_ENV}
  query: SELECT upn AS "UserPrincipalName", display_name AS "DisplayName", department AS "Department", object_type AS "ObjectType", migration_date AS "MigrationDate", proxies AS "ProxyAddresses" FROM source_members
`;
  return `name: bench
data_source:
${source}  primary_key: UserPrincipalName
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

/**
 * Counts statements per connection kind by wrapping Client#query (every pool client is a
 * Client); with BENCH_TRACE, prints the slow ones.
 */
function countStatements() {
  const counts = { app: 0, source: 0 };
  const trace = process.env.BENCH_TRACE === "1";
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (
    this: pg.Client & { connectionParameters?: { application_name?: string } },
    ...args: unknown[]
  ) {
    if (this.connectionParameters?.application_name === "matoolkit-datasource") counts.source += 1;
    else counts.app += 1;
    const started = performance.now();
    const result = (original as (...a: unknown[]) => unknown).apply(this, args);
    if (trace && result instanceof Promise) {
      const first = args[0] as string | { text?: string };
      const text = typeof first === "string" ? first : (first.text ?? "");
      result.then(
        () => {
          const ms = performance.now() - started;
          if (ms > 50)
            console.error(`${ms.toFixed(0).padStart(6)} ms  ${text.replace(/\s+/gu, " ").slice(0, 140)}`);
        },
        () => undefined,
      );
    }
    return result;
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
