import { describe, expect, it } from "vitest";
import { createMetrics } from "./metrics.ts";

/** `matoolkit_alerts_open` (issue 31): read at scrape time from whatever the scheduler tracks. */
describe("matoolkit_alerts_open", () => {
  const samples = async (metrics: ReturnType<typeof createMetrics>) =>
    (await metrics.expose()).body.split("\n").filter((line) => line.startsWith("matoolkit_alerts_open{"));

  it("has one sample per condition and severity the reader returns, and none before anything is tracked", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    expect(await samples(metrics)).toEqual([]);
    let open = [
      { conditionId: "source-failing", severity: "critical", open: 2 },
      { conditionId: "batch-failed", severity: "warning", open: 1 },
    ];
    const stop = metrics.alertsOpen.track(async () => open);
    expect(await samples(metrics)).toEqual([
      'matoolkit_alerts_open{condition="source-failing",severity="critical"} 2',
      'matoolkit_alerts_open{condition="batch-failed",severity="warning"} 1',
    ]);
    // Read again at every scrape: a resolved alert's condition disappears.
    open = [{ conditionId: "batch-failed", severity: "warning", open: 1 }];
    expect(await samples(metrics)).toEqual([
      'matoolkit_alerts_open{condition="batch-failed",severity="warning"} 1',
    ]);
    stop();
    expect(await samples(metrics)).toEqual([]);
  });

  it("has no sample when the read fails (absent, not a misleading zero), and the scrape still answers", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.alertsOpen.track(async () => {
      throw new Error("database down");
    });
    const { body } = await metrics.expose();
    expect(body).toContain("# TYPE matoolkit_alerts_open gauge");
    expect(await samples(metrics)).toEqual([]);
  });
});
