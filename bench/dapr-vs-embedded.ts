// The orchestrator benchmark on both runtimes, for comparison (BENCH_RUNTIME=both runs this):
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test BENCH_RUNTIME=both npm run -s bench:orchestrator
//   DATABASE_URL=… npx tsx bench/dapr-vs-embedded.ts
// Runs bench/orchestrator-throughput.ts with BENCH_RUNTIME=embedded, then with BENCH_RUNTIME=dapr
// (real daprd; MATOOLKIT_DAPR_VERSION), every other variable the same, one after the other (the
// machine's cores are not shared between them), each in a process of its own (each creates and
// drops its own database; the Dapr run starts and stops its own daemons), and prints the figures
// side by side. A run that fails is shown as failed; the exit code is then 1.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchInterrupted, runBenchChild, type ChildOutcome } from "./bench-child.ts";

interface Spread {
  readonly p50: number;
  readonly p99: number;
}

/** What orchestrator-throughput.ts writes to BENCH_RESULT_FILE. */
interface BenchResult {
  readonly runtime: string;
  readonly daprVersion?: string;
  readonly members: number;
  readonly steps: number;
  readonly executionsPerSecond: number;
  readonly seconds: number;
  readonly sqlPerStep: number;
  readonly rawBusPerSecond: number;
  readonly rawBusSqlPerMessage: number;
  /** Dapr only: the app's HTTP calls to its sidecar. */
  readonly rawBusSidecarCallsPerMessage?: number;
  readonly sidecarCallsPerStep?: number;
  readonly ratio: number;
  readonly dueLagMs: number;
  readonly retry: (Spread & { readonly samples: number }) | undefined;
  readonly toWorker: Spread;
  readonly toResult: Spread;
  readonly rss: { readonly first: number; readonly peak: number; readonly last: number };
  readonly daemonRss: ReadonlyArray<{ readonly role: string; readonly peak: number }>;
  readonly cpu: ReadonlyArray<{ readonly role: string; readonly seconds: number }>;
  readonly daemonProblems: ReadonlyArray<{ readonly role: string; readonly count: number }>;
}

type Outcome = ChildOutcome<BenchResult>;

/** Runs both, prints the table, and returns the exit code (0 when both runs succeeded). */
export async function compareRuntimes(
  benchFile: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "matoolkit-bench-compare-"));
  try {
    const outcomes: Array<[string, Outcome]> = [];
    for (const runtime of ["embedded", "dapr"] as const) {
      process.stderr.write(`\n[compare] ===== BENCH_RUNTIME=${runtime} =====\n`);
      outcomes.push([runtime, await runOnce(benchFile, env, runtime, join(dir, `${runtime}.json`))]);
      if (benchInterrupted()) break;
    }
    process.stdout.write(`\n${table(outcomes)}\n`);
    return outcomes.every(([, outcome]) => outcome.ok) ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runOnce(
  benchFile: string,
  env: Readonly<Record<string, string | undefined>>,
  runtime: string,
  resultFile: string,
): Promise<Outcome> {
  // The peer (a plain PostgreSQL queue) is the embedded run's yardstick: run it once, there.
  return runBenchChild<BenchResult>(
    benchFile,
    { ...env, BENCH_RUNTIME: runtime, BENCH_PEER: runtime === "embedded" ? env.BENCH_PEER : "none" },
    resultFile,
  );
}

function table(outcomes: ReadonlyArray<[string, Outcome]>): string {
  const header = outcomes.map(([runtime, outcome]) =>
    !outcome.ok
      ? `${runtime}: ${outcome.why}`
      : outcome.result.daprVersion !== undefined
        ? `${runtime} (daprd ${outcome.result.daprVersion})`
        : runtime,
  );
  const cell = (format: (result: BenchResult) => string) => (index: number) => {
    const outcome = outcomes[index]![1];
    return outcome.ok ? format(outcome.result) : "-";
  };
  const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
  const cpuOf = (result: BenchResult) =>
    result.cpu
      .map(({ role, seconds }) => `${role.replace("bench process", "bench")} ${fixed(seconds, 1)}`)
      .join(", ");
  const rows: Array<[string, (index: number) => string]> = [
    ["members × steps", cell((r) => `${r.members} × ${r.steps} = ${r.members * r.steps}`)],
    ["executions/s", cell((r) => `${fixed(r.executionsPerSecond)}  (${fixed(r.seconds, 1)} s)`)],
    ["SQL statements per step", cell((r) => fixed(r.sqlPerStep, 1))],
    [
      "sidecar HTTP calls per step",
      cell((r) => (r.sidecarCallsPerStep === undefined ? "-" : fixed(r.sidecarCallsPerStep, 1))),
    ],
    [
      "raw bus msg/s (publish→ack)",
      cell(
        (r) =>
          `${fixed(r.rawBusPerSecond)}  (${fixed(r.rawBusSqlPerMessage, 2)} SQL/msg${r.rawBusSidecarCallsPerMessage === undefined ? "" : `, ${fixed(r.rawBusSidecarCallsPerMessage, 2)} sidecar calls/msg`})`,
      ),
    ],
    ["executions / raw bus", cell((r) => fixed(r.ratio, 2))],
    ["phase due → first job", cell((r) => `${fixed(r.dueLagMs)} ms`)],
    [
      "retry due → dispatch p50/p99",
      cell((r) =>
        r.retry === undefined ? "-" : `${fixed(r.retry.p50)} / ${fixed(r.retry.p99)} ms (${r.retry.samples})`,
      ),
    ],
    [
      "dispatch → function start p50/p99",
      cell((r) => `${fixed(r.toWorker.p50)} / ${fixed(r.toWorker.p99)} ms`),
    ],
    [
      "function end → succeeded p50/p99",
      cell((r) => `${fixed(r.toResult.p50)} / ${fixed(r.toResult.p99)} ms`),
    ],
    ["bench process RSS peak", cell((r) => `${r.rss.peak} MB`)],
    [
      "Dapr daemons' RSS peak",
      cell((r) =>
        r.daemonRss.length === 0 ? "-" : r.daemonRss.map((d) => `${d.role} ${d.peak}`).join(", ") + " MB",
      ),
    ],
    ["CPU s during the batches", cell(cpuOf)],
    [
      "daemon warnings/errors logged",
      cell((r) =>
        r.daemonProblems.length === 0
          ? r.daemonRss.length === 0
            ? "-"
            : "none"
          : r.daemonProblems.map((p) => `${p.role} ${p.count}`).join(", "),
      ),
    ],
  ];
  const labelWidth = Math.max(...rows.map(([label]) => label.length));
  const widths = header.map((title, index) =>
    Math.max(title.length, ...rows.map(([, value]) => value(index).length)),
  );
  const line = (label: string, values: readonly string[]) =>
    `${label.padEnd(labelWidth)} | ${values.map((value, index) => value.padEnd(widths[index]!)).join(" | ")}`.trimEnd();
  return [
    line("", header),
    `${"-".repeat(labelWidth)}-+-${widths.map((width) => "-".repeat(width)).join("-+-")}`,
    ...rows.map(([label, value]) =>
      line(
        label,
        header.map((_, index) => value(index)),
      ),
    ),
  ].join("\n");
}

// Run directly: `tsx bench/dapr-vs-embedded.ts`.
if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const env = process.env;
  if (env.DATABASE_URL === undefined) {
    process.stderr.write("Set DATABASE_URL to a PostgreSQL server (each run creates its own database).\n");
    process.exit(2);
  }
  process.exit(await compareRuntimes(join(import.meta.dirname, "orchestrator-throughput.ts"), env));
}
