import { describe, expect, it } from "vitest";
import type { StatusEvent } from "./batch-api.ts";
import { eventSubject } from "./event-wording.ts";

const base: StatusEvent = {
  id: 1,
  entity: "batch",
  entityId: 2,
  fromStatus: "pending",
  toStatus: "dispatched",
  reason: null,
  actor: null,
  at: "2026-11-27T01:00:00.000Z",
  memberKey: null,
  phaseName: null,
  stepName: null,
};

/** The timeline names members, phases and steps as an operator knows them; ids go to the title. */
describe("eventSubject", () => {
  it("names a step event by its member and step, the execution id and phase in the title", () => {
    expect(
      eventSubject({
        ...base,
        entity: "step",
        entityId: 10,
        memberKey: "adele.vance@contoso.test",
        phaseName: "cutover",
        stepName: "set-primary-email",
      }),
    ).toEqual({
      text: "adele.vance@contoso.test · set-primary-email",
      title: "step execution 10 · phase cutover",
    });
  });

  it("names member, phase and init events, and keeps the batch's own id", () => {
    expect(
      eventSubject({ ...base, entity: "member", entityId: 3, memberKey: "megan.bowen@contoso.test" }),
    ).toEqual({ text: "megan.bowen@contoso.test", title: "member 3" });
    expect(eventSubject({ ...base, entity: "phase", entityId: 4, phaseName: "pre-checks" })).toEqual({
      text: "phase pre-checks",
      title: "phase execution 4",
    });
    expect(eventSubject({ ...base, entity: "init", entityId: 5, stepName: "create-batch-group" })).toEqual({
      text: "init create-batch-group",
      title: "init execution 5",
    });
    expect(eventSubject(base)).toEqual({ text: "batch 2", title: "batch 2" });
  });

  it("falls back to the entity and id when the read model has no names for it", () => {
    expect(eventSubject({ ...base, entity: "step", entityId: 10 })).toEqual({
      text: "step 10",
      title: "step 10",
    });
  });
});
