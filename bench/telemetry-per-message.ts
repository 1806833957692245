// What telemetry costs per message on the services' event loop, with nothing else running (run on
// demand; bench/telemetry-cost.ts measures the same end to end, where the machine's drift between
// runs is larger than the effect):
//   npx tsx bench/telemetry-per-message.ts
// Options: BENCH_CYCLES (40000), BENCH_ROUNDS (3), OTEL_EXPORTER_OTLP_PROTOCOL for the exported
// mode (http/protobuf default, http/json, grpc is not served by the sink).
// One cycle is a step's two messages: a job published, its handler publishing the result, the
// result handled; four spans when spans are recorded. The bus is an in-memory one that delivers
// on the next turn of the event loop, so the figures are the instrumentation's alone
// (instrumentMessageBus, tracing.ts), in three modes, each in a process of its own:
//   off       the bus as is (OTEL_SDK_DISABLED: not instrumented)
//   context   telemetry on, no OTLP endpoint: trace context and lag metrics, no spans recorded
//   exported  spans recorded and exported over OTLP/HTTP to a sink on loopback (in this process)
// Prints CPU µs per cycle of the whole process and of its main thread (the export thread's work
// is the difference), the median of the rounds.
import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type {
  Delivery,
  DeliveryHandler,
  MessageBus,
  OutgoingMessage,
  Subscription,
} from "@matoolkit/runtime";
import { createLogger, instrumentMessageBus, startTracing } from "@matoolkit/runtime";
import { topics } from "@matoolkit/domain";

type Mode = "off" | "context" | "exported";
const modes: readonly Mode[] = ["off", "context", "exported"];
const cycles = Number(process.env.BENCH_CYCLES ?? 40_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
for (const [name, value, max] of [
  ["BENCH_CYCLES", cycles, 1_000_000],
  ["BENCH_ROUNDS", rounds, 20],
] as const) {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    process.stderr.write(`${name} must be a whole number from 1 to ${max}, not ${process.env[name]}\n`);
    process.exit(2);
  }
}

const child = process.env.BENCH_TELEMETRY_MODE as Mode | undefined;
if (child === undefined) {
  const figures = new Map<Mode, Array<{ process: number; mainThread: number }>>(
    modes.map((mode) => [mode, []]),
  );
  for (let round = 1; round <= rounds; round += 1) {
    for (const mode of modes) {
      const run = spawnSync(process.execPath, [...process.execArgv, import.meta.filename], {
        env: { ...process.env, BENCH_TELEMETRY_MODE: mode },
        encoding: "utf8",
      });
      if (run.status !== 0) {
        process.stderr.write(`mode ${mode} failed:\n${run.stderr}\n`);
        process.exit(1);
      }
      const result = JSON.parse(run.stdout) as { process: number; mainThread: number };
      figures.get(mode)!.push(result);
      process.stdout.write(
        `round ${round}, ${mode.padEnd(8)}: ${result.process.toFixed(1)} µs/cycle (main thread ${result.mainThread.toFixed(1)})\n`,
      );
    }
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  process.stdout.write(
    `\n${cycles} cycles (a job and its result: 2 messages, 4 spans when recorded), medians:\n`,
  );
  for (const mode of modes) {
    const runs = figures.get(mode)!;
    process.stdout.write(
      `${mode.padEnd(8)}  process ${median(runs.map((r) => r.process)).toFixed(1)} µs/cycle, main thread ${median(runs.map((r) => r.mainThread)).toFixed(1)} µs/cycle\n`,
    );
  }
  process.exit(0);
}

// The child: one mode, one measurement, its figures as JSON on stdout.
const sink = createServer((request, response) => {
  request.resume();
  request.on("end", () =>
    response.writeHead(200, { "content-type": request.headers["content-type"] ?? "" }).end(),
  );
});
await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
const logger = createLogger({ level: "silent", name: "bench-telemetry-per-message" });
const protocol = process.env.OTEL_EXPORTER_OTLP_PROTOCOL === "http/json" ? "http/json" : "http/protobuf";
const tracing =
  child === "off"
    ? undefined
    : startTracing({
        serviceName: "bench",
        ...(child === "exported"
          ? {
              otlpTracesUrl: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/v1/traces`,
              otlpTracesProtocol: protocol,
            }
          : {}),
        logger,
      });

const handlers = new Map<string, DeliveryHandler>();
const deliver = (message: OutgoingMessage): void => {
  const delivery: Delivery = {
    id: message.id,
    topic: message.topic,
    body: message.body,
    properties: message.properties,
    deliveryCount: 1,
  };
  setImmediate(() => void handlers.get(message.topic)?.(delivery));
};
const memoryBus: MessageBus = {
  async publish(message) {
    deliver(message);
  },
  async publishMany(messages) {
    for (const message of messages) deliver(message);
  },
  async subscribe(subscription: Subscription, handler: DeliveryHandler) {
    handlers.set(subscription.topic, handler);
  },
  async declareSubscription() {},
  async deadLetters() {
    return [];
  },
  async stop() {},
};
const bus = child === "off" ? memoryBus : instrumentMessageBus(memoryBus, { system: "pg-boss" });

let handled = 0;
let finished!: () => void;
const done = new Promise<void>((resolve) => (finished = resolve));
await bus.subscribe({ topic: topics.workerJobs, name: "worker" }, async (delivery) => {
  await bus.publish({
    id: `result-${delivery.id}`,
    topic: topics.workerResults,
    properties: { MessageType: "StepResult" },
    body: {},
  });
});
await bus.subscribe({ topic: topics.workerResults, name: "orchestrator" }, async () => {
  handled += 1;
  if (handled === cycles) finished();
});

const processBefore = process.cpuUsage();
const threadBefore = process.threadCpuUsage();
for (let sent = 0; sent < cycles; sent += 100) {
  await Promise.all(
    Array.from({ length: Math.min(100, cycles - sent) }, (_, index) =>
      bus.publish({
        id: `job-${sent + index}`,
        topic: topics.workerJobs,
        properties: { MessageType: "StepJob" },
        body: {},
      }),
    ),
  );
  await new Promise((resolve) => setImmediate(resolve));
}
await done;
// The spans still queued are part of the cost: flushed (and for `exported`, sent) before reading.
await tracing?.shutdown();
const processUsed = process.cpuUsage(processBefore);
const threadUsed = process.threadCpuUsage(threadBefore);
sink.close();
process.stdout.write(
  JSON.stringify({
    process: (processUsed.user + processUsed.system) / cycles,
    mainThread: (threadUsed.user + threadUsed.system) / cycles,
  }),
);
