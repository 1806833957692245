import { describe, expect, it } from "vitest";
import { emptyFollowUps } from "./context.ts";
import { countByPhase, phasesToCheck, phasesToNudge } from "./follow-up-phases.ts";

/** A transaction's follow-ups: steps succeeded and dispatched per phase, and phases touched otherwise. */
function followUps(args: { succeeded?: number[]; dispatched?: number[]; touched?: number[] }) {
  const result = emptyFollowUps();
  for (const phaseId of args.succeeded ?? []) countByPhase(result.succeededByPhase, phaseId);
  for (const phaseId of args.dispatched ?? []) countByPhase(result.dispatchedByPhase, phaseId);
  for (const phaseId of args.touched ?? []) result.phaseIds.add(phaseId);
  return result;
}

describe("follow-up phases of a handler transaction", () => {
  it("neither checks nor nudges a phase whose members each moved on to their next step", () => {
    const done = followUps({ succeeded: [7, 7, 7], dispatched: [7, 7, 7] });
    expect([...phasesToCheck(done)]).toEqual([]);
    expect([...phasesToNudge(done)]).toEqual([]);
  });

  it("nudges, but does not check, a phase where fewer steps were dispatched than succeeded", () => {
    // One member finished its chain while another moved on: the window has room, the phase an open step.
    const done = followUps({ succeeded: [7, 7], dispatched: [7] });
    expect([...phasesToCheck(done)]).toEqual([]);
    expect([...phasesToNudge(done)]).toEqual([7]);
  });

  it("checks and nudges a phase where steps succeeded and nothing was dispatched", () => {
    const done = followUps({ succeeded: [7, 8], dispatched: [8] });
    expect([...phasesToCheck(done)]).toEqual([7]);
    expect([...phasesToNudge(done)]).toEqual([7]);
  });

  it("checks and nudges every phase touched any other way, whatever was dispatched in it", () => {
    const done = followUps({ succeeded: [7], dispatched: [7, 9], touched: [7, 9] });
    expect([...phasesToCheck(done)].sort()).toEqual([7, 9]);
    expect([...phasesToNudge(done)].sort()).toEqual([7, 9]);
  });

  it("does not check or nudge a phase that only had steps dispatched (a retry, a chain's start)", () => {
    const done = followUps({ dispatched: [5] });
    expect([...phasesToCheck(done)]).toEqual([]);
    expect([...phasesToNudge(done)]).toEqual([]);
  });
});
