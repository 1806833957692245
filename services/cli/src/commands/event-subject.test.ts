import { describe, expect, it } from "vitest";
import { eventSubject } from "./event-subject.ts";
import type { EventView } from "./views.ts";

const event = (entity: string, names: Partial<EventView> = {}): EventView => ({
  id: 1,
  entity,
  entityId: 10,
  fromStatus: "pending",
  toStatus: "dispatched",
  reason: null,
  at: "2026-01-01T00:00:00.000Z",
  ...names,
});

describe("an event's subject in the CLI", () => {
  it("names the member and the step, the phase, the init step, with the id for batch events", () => {
    const names = {
      memberKey: "adele.vance@contoso.test",
      phaseName: "cutover",
      stepName: "set-primary-email",
    };
    expect(eventSubject(event("step", names), { withId: true })).toBe(
      "adele.vance@contoso.test · set-primary-email (step 10)",
    );
    expect(eventSubject(event("step", names), { withId: false })).toBe(
      "adele.vance@contoso.test · set-primary-email",
    );
    expect(eventSubject(event("member", { memberKey: "adele.vance@contoso.test" }), { withId: true })).toBe(
      "adele.vance@contoso.test (member 10)",
    );
    expect(eventSubject(event("phase", { phaseName: "cutover" }), { withId: true })).toBe(
      "phase cutover (phase 10)",
    );
    expect(eventSubject(event("init", { stepName: "create-batch-group" }), { withId: false })).toBe(
      "init create-batch-group",
    );
  });

  it("falls back to the entity and id when the server names nothing (older server, row gone)", () => {
    expect(eventSubject(event("step"), { withId: true })).toBe("step 10");
    expect(
      eventSubject(event("step", { memberKey: "a@contoso.test", stepName: null }), { withId: true }),
    ).toBe("step 10");
    expect(eventSubject(event("batch"), { withId: false })).toBe("batch 10");
  });

  it("keeps a name to one line: control characters in member data are escaped", () => {
    const subject = eventSubject(event("member", { memberKey: "evil\u001b[2Jname\nnext" }), {
      withId: false,
    });
    expect([...subject].some((c) => c === "\u001b" || c === "\n")).toBe(false);
  });
});
