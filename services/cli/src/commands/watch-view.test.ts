import { describe, expect, it } from "vitest";
import { Output } from "../output/output.ts";
import type { BatchDetailView, EventView } from "./views.ts";
import { formatMemberCounts } from "./batch.views.ts";
import { progressBar, WatchView } from "./watch-view.ts";

function batch(status: string, running: number, succeeded: number): BatchDetailView {
  return {
    id: 4,
    runbookName: "contoso-pilot",
    runbookVersion: 2,
    status,
    isManual: true,
    batchStartTime: null,
    detectedAt: "2026-01-01T00:00:00.000Z",
    createdBy: "local-admin",
    currentPhase: "pre-checks",
    memberCounts: { active: 3 },
    phases: [
      {
        id: 9,
        phaseName: "pre-checks",
        sequence: 0,
        status: running > 0 ? "dispatched" : "completed",
        dueAt: null,
        memberCounts: { succeeded, skipped: 0, failed: 0, cancelled: 0, running },
      },
    ],
  };
}

const phaseEvent: EventView = {
  id: 31,
  entity: "phase",
  entityId: 9,
  fromStatus: "pending",
  toStatus: "dispatched",
  reason: null,
  at: "2026-01-01T00:00:01.000Z",
};

function terminal(isTTY: boolean) {
  let text = "";
  return {
    output: new Output({ write: (t: string) => (text += t), isTTY, columns: 100 }, false),
    text: () => text,
  };
}

describe("batch watch view", () => {
  it("on a terminal redraws the status block in place under the new events, with progress bars", () => {
    const tty = terminal(true);
    const view = new WatchView(tty.output);
    view.update(batch("active", 3, 0), []);
    const first = tty.text();
    expect(first).toBe(
      "batch 4 (contoso-pilot v2): active; members 3 active\n" +
        "  pre-checks: dispatched [--------------------] 0/3 succeeded, 0 failed, 0 cancelled, 3 running\n",
    );
    view.update(batch("active", 1, 2), [phaseEvent]);
    expect(tty.text().slice(first.length)).toBe(
      "\x1b[2F\x1b[0J" +
        "2026-01-01T00:00:01.000Z  phase pre-checks: pending -> dispatched\n" +
        "batch 4 (contoso-pilot v2): active; members 3 active\n" +
        "  pre-checks: dispatched [#############-------] 2/3 succeeded, 0 failed, 0 cancelled, 1 running\n",
    );
  });

  it("on a narrow terminal cuts the block's lines so the redraw stays in place", () => {
    let text = "";
    const narrow = new Output({ write: (t: string) => (text += t), isTTY: true, columns: 40 }, false);
    new WatchView(narrow).update(batch("active", 3, 0), []);
    expect(text.split("\n").filter(Boolean)).toEqual([
      "batch 4 (contoso-pilot v2): active; me…",
      "  pre-checks: dispatched [------------…",
    ]);
    expect(text.split("\n").every((line) => line.length < 40)).toBe(true);
  });

  it("piped, prints each change once as a plain line and skips what did not change", () => {
    const piped = terminal(false);
    const view = new WatchView(piped.output);
    view.update(batch("active", 3, 0), []);
    view.update(batch("active", 3, 0), []);
    view.update(batch("completed", 0, 3), [{ ...phaseEvent, id: 32, entity: "step", entityId: 70 }]);
    expect(piped.text()).toBe(
      "phase pre-checks: dispatched, 0/3 succeeded, 0 failed, 0 cancelled, 3 running\n" +
        "batch 4 (contoso-pilot v2): active; members 3 active\n" +
        "phase pre-checks: completed, 3/3 succeeded, 0 failed, 0 cancelled, 0 running\n" +
        "batch 4 (contoso-pilot v2): completed; members 3 active\n",
    );
  });

  it("names a member and an init step by name, as the server's events do", () => {
    const piped = terminal(false);
    const at = "2026-01-01T00:00:02.000Z";
    new WatchView(piped.output).update(batch("active", 3, 0), [
      { ...phaseEvent, id: 33, entity: "member", entityId: 5, memberKey: "adele.vance@contoso.test", at },
      { ...phaseEvent, id: 34, entity: "init", entityId: 2, stepName: "create-batch-group", at },
    ]);
    expect(piped.text()).toMatch(
      new RegExp(
        `^${at}  adele\\.vance@contoso\\.test: pending -> dispatched\n${at}  init create-batch-group: pending -> dispatched\n`,
      ),
    );
  });

  it("says a manual batch waits for an advance instead of looking stuck", () => {
    const piped = terminal(false);
    new WatchView(piped.output).update({ ...batch("detected", 0, 0), phases: [] }, []);
    expect(piped.text()).toBe(
      "batch 4 (contoso-pilot v2): detected; members 3 active - waiting for `matoolkit batch advance 4`\n",
    );
  });

  it("says which phase awaits approval and how to approve it (issue 30)", () => {
    const piped = terminal(false);
    const gated = batch("active", 0, 3);
    new WatchView(piped.output).update(
      {
        ...gated,
        phases: [
          ...gated.phases,
          {
            id: 10,
            phaseName: "cutover",
            sequence: 1,
            status: "awaiting_approval",
            dueAt: null,
            approvalRequired: true,
            approvalExpiresAt: null,
            approvalDecision: null,
            memberCounts: { succeeded: 0, skipped: 0, failed: 0, cancelled: 0, running: 0 },
          },
        ],
      },
      [],
    );
    expect(piped.text().trimEnd().split("\n").at(-1)).toBe(
      "batch 4 (contoso-pilot v2): active; members 3 active - phase cutover awaits approval: " +
        "`matoolkit phase approve 4 1` (or reject)",
    );
  });

  it("fills the bar with the finished share of the dispatched members", () => {
    expect(progressBar({ succeeded: 0, skipped: 0, failed: 0, cancelled: 0, running: 0 })).toBe(
      `[${"-".repeat(20)}]`,
    );
    expect(progressBar({ succeeded: 1, skipped: 0, failed: 1, cancelled: 0, running: 2 })).toBe(
      `[${"#".repeat(10)}${"-".repeat(10)}]`,
    );
    // Members a when: skipped through the whole phase are finished too (issue 30).
    expect(progressBar({ succeeded: 1, skipped: 2, failed: 0, cancelled: 0, running: 1 })).toBe(
      `[${"#".repeat(15)}${"-".repeat(5)}]`,
    );
  });

  it("names the members a when: skipped through the phase, only when there are some", () => {
    const counts = { succeeded: 1, skipped: 2, failed: 0, cancelled: 0, running: 1 };
    expect(formatMemberCounts(counts)).toBe("1/4 succeeded, 2 skipped, 0 failed, 0 cancelled, 1 running");
    expect(formatMemberCounts({ ...counts, skipped: 0 })).toBe(
      "1/2 succeeded, 0 failed, 0 cancelled, 1 running",
    );
  });
});
