import { describe, expect, it } from "vitest";
import type { OpenAlert } from "./alerts-api.ts";
import { alertLines, alertsHeading } from "./alerts-wording.ts";

const alert = (id: number, fields: Partial<OpenAlert>): OpenAlert => ({
  id,
  condition: "batch-failed",
  severity: "warning",
  summary: "A batch failed",
  subject: `batch:${id}`,
  runbookName: "hr-feed",
  batchId: id,
  raisedAt: "2030-06-01T12:00:00.000Z",
  ...fields,
});

/** The alerts banner (issue 31): its heading and one line per open alert. */
describe("alerts banner wording", () => {
  const failed = alert(7, {});
  const source = alert(6, {
    condition: "source-failing",
    severity: "critical",
    summary: "A runbook's data source failed several scheduler ticks in a row",
    subject: "runbook:hr feed",
    runbookName: "hr feed",
    batchId: null,
  });
  const deadLetters = alert(5, {
    condition: "dead-letters",
    severity: "critical",
    summary: "Messages were dead-lettered",
    subject: "subscription:orchestrator-events/orchestrator",
    runbookName: null,
    batchId: null,
  });

  it("counts the open alerts, critical ones apart", () => {
    expect(alertsHeading([failed])).toBe("1 open alert");
    expect(alertsHeading([failed, source, deadLetters])).toBe("3 open alerts (2 critical)");
  });

  it("lists critical alerts first, each linked to its batch or runbook when it has one", () => {
    expect(alertLines([failed, source, deadLetters])).toEqual([
      {
        id: 6,
        severity: "critical",
        text: "A runbook's data source failed several scheduler ticks in a row: runbook:hr feed",
        href: "#/runbooks/hr%20feed",
      },
      {
        id: 5,
        severity: "critical",
        text: "Messages were dead-lettered: subscription:orchestrator-events/orchestrator",
        href: undefined,
      },
      { id: 7, severity: "warning", text: "A batch failed: batch:7", href: "#/batches/7" },
    ]);
  });
});
