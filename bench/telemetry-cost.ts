// What telemetry costs the hot path (issue 29: "telemetry on costs ≤ 3 %"), run on demand:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/telemetry-cost.ts
// Options: BENCH_ROUNDS (2), every option of bench/orchestrator-throughput.ts (BENCH_MEMBERS…), and
// OpenTelemetry's own variables for the "on" runs (e.g. OTEL_TRACES_SAMPLER=parentbased_traceidratio
// OTEL_TRACES_SAMPLER_ARG=0.1, read by the SDK itself); OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf
// (default) or http/json picks the "on" runs' encoding.
// Runs the orchestrator benchmark BENCH_ROUNDS × twice, alternating, each in a process of its own
// with nothing else running: telemetry OFF (OTEL_SDK_DISABLED=true: no spans, no trace context in
// messages, no lag histograms) and ON as a deployment has it (spans recorded and exported over
// OTLP/HTTP to a collector, here a sink in this process on loopback that accepts every export and
// counts it). Alternating spreads the machine's drift over both. Prints every run, the medians,
// and the cost: 1 − on / off, for member-step executions/s and for the raw bus.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchInterrupted, runBenchChild, type ChildOutcome } from "./bench-child.ts";

/** The part of orchestrator-throughput.ts's BENCH_RESULT_FILE this comparison reads. */
interface Figures {
  readonly telemetry: string;
  readonly members: number;
  readonly steps: number;
  readonly executionsPerSecond: number;
  readonly rawBusPerSecond: number;
  readonly cpu: ReadonlyArray<{ readonly role: string; readonly seconds: number }>;
}

const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 10) {
  process.stderr.write(`BENCH_ROUNDS must be a whole number from 1 to 10, not ${process.env.BENCH_ROUNDS}\n`);
  process.exit(2);
}
if (process.env.DATABASE_URL === undefined) {
  process.stderr.write("Set DATABASE_URL to a PostgreSQL server (the benchmark creates its own database).\n");
  process.exit(2);
}

// The collector: OTLP/HTTP's traces path answers 200 with an empty (valid) response.
const exported = { requests: 0, bytes: 0 };
const sink = createServer((request, response) => {
  request.on("data", (chunk: Buffer) => (exported.bytes += chunk.length));
  request.on("end", () => {
    exported.requests += 1;
    response.writeHead(200, { "content-type": request.headers["content-type"] ?? "application/x-protobuf" });
    response.end();
  });
});
await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

const benchFile = join(import.meta.dirname, "orchestrator-throughput.ts");
const dir = mkdtempSync(join(tmpdir(), "matoolkit-bench-telemetry-"));
// The caller's other OpenTelemetry settings (OTEL_TRACES_SAMPLER…) hold for the "on" runs.
const protocol = process.env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf";
if (protocol !== "http/protobuf" && protocol !== "http/json") {
  process.stderr.write(
    `OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json here (the sink speaks HTTP), not ${protocol}\n`,
  );
  process.exit(2);
}
const base = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => name !== "OTEL_SDK_DISABLED" && !name.startsWith("OTEL_EXPORTER_OTLP_"),
  ),
);
const modes = {
  off: { ...base, OTEL_SDK_DISABLED: "true" },
  on: {
    ...base,
    OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
    // http/json costs less CPU to encode (JSON.stringify is native), http/protobuf less to send.
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  },
} as const;
const runs: Array<{ mode: keyof typeof modes; outcome: ChildOutcome<Figures> }> = [];
try {
  for (let round = 1; round <= rounds && !benchInterrupted(); round += 1) {
    for (const mode of ["off", "on"] as const) {
      process.stderr.write(`\n[telemetry-cost] ===== round ${round}: telemetry ${mode} =====\n`);
      const env = { ...modes[mode], BENCH_PEER: "none" };
      runs.push({
        mode,
        outcome: await runBenchChild<Figures>(benchFile, env, join(dir, `${mode}-${round}.json`)),
      });
      if (benchInterrupted()) break;
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  sink.close();
}

const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length === 0
    ? Number.NaN
    : sorted.length % 2 === 1
      ? sorted[middle]!
      : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const lines: string[] = [];
for (const [index, { mode, outcome }] of runs.entries()) {
  lines.push(
    outcome.ok
      ? `run ${index + 1}, telemetry ${mode.padEnd(3)}: ${fixed(outcome.result.executionsPerSecond)} executions/s, raw bus ${fixed(outcome.result.rawBusPerSecond)} msg/s, CPU ${outcome.result.cpu.map(({ role, seconds }) => `${role} ${fixed(seconds, 1)} s`).join(", ")}  (${outcome.result.telemetry})`
      : `run ${index + 1}, telemetry ${mode}: ${outcome.why}`,
  );
}
const figures = (mode: keyof typeof modes) =>
  runs.flatMap((run) => (run.mode === mode && run.outcome.ok ? [run.outcome.result] : []));
const [off, on] = [figures("off"), figures("on")];
const first = off[0] ?? on[0];
if (first !== undefined)
  lines.unshift(`members × steps: ${first.members} × ${first.steps}, ${rounds} round(s)`);
for (const [label, pick] of [
  ["executions/s", (figures: Figures) => figures.executionsPerSecond],
  ["raw bus msg/s", (figures: Figures) => figures.rawBusPerSecond],
] as const) {
  const [offMedian, onMedian] = [median(off.map(pick)), median(on.map(pick))];
  lines.push(
    `${label} median: off ${fixed(offMedian)}, on ${fixed(onMedian)} → telemetry costs ${fixed((1 - onMedian / offMedian) * 100, 1)} %`,
  );
}
lines.push(
  `OTLP sink received ${exported.requests} export requests, ${fixed(exported.bytes / 1e6, 1)} MB (${protocol})`,
);
process.stdout.write(`\n${lines.join("\n")}\n`);
process.exit(runs.every((run) => run.outcome.ok) && runs.length === rounds * 2 ? 0 : 1);
