import { monitorEventLoopDelay, performance } from "node:perf_hooks";

export interface EventLoopReading {
  /** Share of the span the main thread was running JavaScript or native work, 0..1. */
  readonly busy: number;
  /** How late a 1 ms timer fired, mean and p99, ms: what a reply waits before its caller runs. */
  readonly delayMeanMs: number;
  readonly delayP99Ms: number;
}

/**
 * This process's main thread over a span. Every service of the embedded runtime shares it, so a
 * statement's answer waits there for whatever runs first (another service's batch of messages);
 * a transaction of a dozen statements waits that many times. Printed beside the CPU seconds to
 * tell a pipeline waiting on its main thread from one waiting on PostgreSQL.
 */
export function sampleEventLoop(): { stop(): EventLoopReading } {
  // 1 ms, not Node's default 10: a sample every millisecond weighs a long task by how long it
  // blocks, as a reply arriving at a random moment meets it (with 10 ms, one run read 1.7 / 20.8
  // ms where 1 ms reads ~0.6 / 8). The thousand wake-ups a second showed no cost beyond the runs'
  // spread (bench:orchestrator 2,000 × 5, three pairs alternating with the code before the meter:
  // 1,273 / 1,521 / 1,315 against 1,643 / 1,487 / 1,324 executions/s).
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const start = performance.eventLoopUtilization();
  return {
    stop() {
      delay.disable();
      const used = performance.eventLoopUtilization(start);
      // The histogram counts the timer's own 1 ms interval in; what is late is the rest.
      const late = (nanoseconds: number) => Math.max(0, nanoseconds / 1e6 - 1);
      return {
        busy: used.utilization,
        delayMeanMs: late(delay.mean),
        delayP99Ms: late(delay.percentile(99)),
      };
    },
  };
}
