import { Gauge, type Registry } from "prom-client";

export interface OpenAlertCount {
  readonly conditionId: string;
  readonly severity: string;
  readonly open: number;
}

export interface AlertMetrics {
  /** Reads the open alerts at every scrape (the scheduler); returns the function that stops it. */
  track(read: () => Promise<readonly OpenAlertCount[]>): () => void;
}

/**
 * `matoolkit_alerts_open{condition, severity}` (issue 31): the open rows of the `alerts` table,
 * read from the database at scrape time, so every scheduler replica reports the same numbers
 * whichever one ran the evaluator last. Labels are the fixed condition ids and severities.
 * A failed read leaves the gauge empty rather than stale: absent is not "zero alerts".
 */
export function createAlertMetrics(registers: Registry[]): AlertMetrics {
  let reader: (() => Promise<readonly OpenAlertCount[]>) | undefined;
  new Gauge({
    name: "matoolkit_alerts_open",
    help: "Open alerts raised by the scheduler's evaluator, by condition and severity (read from the database at scrape time)",
    labelNames: ["condition", "severity"],
    registers,
    async collect() {
      this.reset();
      if (reader === undefined) return;
      const counts = await reader().catch(() => undefined);
      for (const count of counts ?? [])
        this.set({ condition: count.conditionId, severity: count.severity }, count.open);
    },
  });
  return {
    track(read) {
      reader = read;
      return () => {
        if (reader === read) reader = undefined;
      };
    },
  };
}
