import { describe, expect, it } from "vitest";
import type { StateMachine } from "./define-machine.ts";
import { defineMachine } from "./define-machine.ts";
import { allMachines, batchMachine, executionMachine, memberMachine, phaseMachine } from "./machines.ts";

/** Every allowed transition as `from --event--> to`, found by asking `next` about every pair. */
function allowedTransitions<S extends string, E extends string>(machine: StateMachine<S, E>): string[] {
  const events = Object.keys(machine.transitions) as E[];
  return machine.states.flatMap((from) =>
    events.flatMap((event) => {
      const to = machine.next(from, event);
      return to === undefined ? [] : [`${from} --${event}--> ${to}`];
    }),
  );
}

describe("batch machine (000 State Machines → Batch Status)", () => {
  it("holds the spec's statuses plus cancelled and paused", () => {
    expect([...batchMachine.states].sort()).toEqual(
      ["active", "cancelled", "completed", "detected", "failed", "init_dispatched", "paused"].sort(),
    );
    expect(batchMachine.initial).toBe("detected");
    expect([...batchMachine.terminal].sort()).toEqual(["cancelled", "completed", "failed"]);
  });

  it("allows exactly detected → init_dispatched → active → completed/failed, skipping init when there is none, a cancel from any non-terminal state, pause/resume and a redrive's reopen", () => {
    expect(allowedTransitions(batchMachine).sort()).toEqual(
      [
        "detected --dispatch_init--> init_dispatched",
        "detected --activate--> active",
        "init_dispatched --activate--> active",
        "active --complete--> completed",
        "detected --fail--> failed",
        "init_dispatched --fail--> failed",
        "active --fail--> failed",
        // Not in 000: POST /api/batches/{id}/cancel.
        "detected --cancel--> cancelled",
        "init_dispatched --cancel--> cancelled",
        "active --cancel--> cancelled",
        // Issue 12: an operator's brake; the jobs already out still end the batch.
        "active --pause--> paused",
        "paused --resume--> active",
        "paused --complete--> completed",
        "paused --fail--> failed",
        "paused --cancel--> cancelled",
        // Issue 12: a redrive of failed members brings an ended batch back.
        "completed --reopen--> active",
        "failed --reopen--> active",
      ].sort(),
    );
  });

  it("never moves a cancelled batch to completed or failed", () => {
    for (const event of Object.keys(batchMachine.transitions) as (keyof typeof batchMachine.transitions)[]) {
      expect(batchMachine.next("cancelled", event)).toBeUndefined();
    }
  });

  it("pauses only a running (active) batch: init runs to its end, an ended one has nothing to hold", () => {
    expect(batchMachine.sourcesOf("pause")).toEqual(["active"]);
    expect(batchMachine.sourcesOf("resume")).toEqual(["paused"]);
  });

  it("cannot complete a batch whose init has not finished", () => {
    expect(batchMachine.next("init_dispatched", "complete")).toBeUndefined();
    expect(batchMachine.next("detected", "complete")).toBeUndefined();
  });
});

describe("member machine (000 State Machines → Member Status)", () => {
  it("only lets an active member be removed or failed, once, and only a failed one be redriven", () => {
    expect([...memberMachine.states].sort()).toEqual(["active", "failed", "removed"]);
    expect(allowedTransitions(memberMachine).sort()).toEqual(
      ["active --fail--> failed", "active --remove--> removed", "failed --redrive--> active"].sort(),
    );
    // A removed member left the source: nothing brings it back into this batch.
    expect(memberMachine.next("removed", "redrive")).toBeUndefined();
    expect(memberMachine.next("removed", "fail")).toBeUndefined();
    expect(memberMachine.next("failed", "remove")).toBeUndefined();
  });
});

describe("phase machine (000 State Machines → Phase Execution Status)", () => {
  it("holds the spec's statuses plus cancelled and awaiting_approval", () => {
    expect([...phaseMachine.states].sort()).toEqual(
      [
        "awaiting_approval",
        "cancelled",
        "completed",
        "dispatched",
        "failed",
        "pending",
        "skipped",
        "superseded",
      ].sort(),
    );
    expect([...phaseMachine.terminal].sort()).toEqual([
      "cancelled",
      "completed",
      "failed",
      "skipped",
      "superseded",
    ]);
  });

  it("skips or supersedes only a pending phase, completes or fails only a dispatched one, cancels either, and reopens an ended one for a redrive", () => {
    expect(allowedTransitions(phaseMachine).sort()).toEqual(
      [
        "pending --dispatch--> dispatched",
        "pending --skip--> skipped",
        "pending --supersede--> superseded",
        "dispatched --complete--> completed",
        "dispatched --fail--> failed",
        // Not in 000: the batch was cancelled.
        "pending --cancel--> cancelled",
        "dispatched --cancel--> cancelled",
        // Issue 12: a redriven member runs in it again.
        "completed --reopen--> dispatched",
        "failed --reopen--> dispatched",
        // Issue 30: an approval gate, decided by an operator or its timeout; a cancel or a new
        // runbook version ends the wait too.
        "pending --await_approval--> awaiting_approval",
        "awaiting_approval --approve--> dispatched",
        "awaiting_approval --reject--> failed",
        "awaiting_approval --cancel--> cancelled",
        "awaiting_approval --supersede--> superseded",
      ].sort(),
    );
    expect(phaseMachine.next("cancelled", "reopen")).toBeUndefined();
    expect(phaseMachine.sourcesOf("skip")).toEqual(["pending"]);
    expect(phaseMachine.sourcesOf("supersede")).toEqual(["pending", "awaiting_approval"]);
  });

  it("never sends a gated phase without a decision, nor decides one twice (issue 30)", () => {
    // Only approve leads from the gate to dispatched; a phase that never waited cannot be approved.
    expect(phaseMachine.next("awaiting_approval", "dispatch")).toBeUndefined();
    expect(phaseMachine.sourcesOf("approve")).toEqual(["awaiting_approval"]);
    expect(phaseMachine.sourcesOf("reject")).toEqual(["awaiting_approval"]);
    for (const decided of ["dispatched", "failed", "cancelled", "superseded"] as const) {
      expect(phaseMachine.next(decided, "approve")).toBeUndefined();
      expect(phaseMachine.next(decided, "reject")).toBeUndefined();
    }
    expect(phaseMachine.isTerminal("awaiting_approval")).toBe(false);
  });
});

describe("execution machine (000 State Machines → Step/Init Execution Status)", () => {
  it("holds exactly the spec's statuses, plus skipped (issue 30)", () => {
    expect([...executionMachine.states].sort()).toEqual(
      [
        "cancelled",
        "dispatched",
        "failed",
        "pending",
        "poll_timeout",
        "polling",
        "skipped",
        "succeeded",
      ].sort(),
    );
    expect(executionMachine.initial).toBe("pending");
  });

  it("allows exactly the spec's transitions, plus an operator's redrive", () => {
    expect(allowedTransitions(executionMachine).sort()).toEqual(
      [
        "pending --dispatch--> dispatched",
        "dispatched --succeed--> succeeded",
        // Not drawn in 000: a step whose templates cannot be resolved fails before dispatch
        // (template.unresolved), through its own event so a worker result's `fail` never hits a pending retry.
        "pending --fail_to_dispatch--> failed",
        "dispatched --fail--> failed",
        "dispatched --start_polling--> polling",
        "polling --succeed--> succeeded",
        "polling --fail--> failed",
        "polling --time_out_polling--> poll_timeout",
        // 000: SetRetryPendingAsync is guarded by `WHERE status IN ('failed', 'poll_timeout')`.
        "failed --retry--> pending",
        "poll_timeout --retry--> pending",
        "pending --cancel--> cancelled",
        "dispatched --cancel--> cancelled",
        "polling --cancel--> cancelled",
        // Issue 12: the failed step, and the steps its member's failure cancelled, run again.
        "failed --redrive--> pending",
        "poll_timeout --redrive--> pending",
        "cancelled --redrive--> pending",
        // Issue 30: a step whose when: is false when its turn comes is never sent.
        "pending --skip--> skipped",
      ].sort(),
    );
  });

  it("lets a worker failure (`fail`) hit only an execution that is out with a worker", () => {
    expect(executionMachine.sourcesOf("fail")).toEqual(["dispatched", "polling"]);
    expect(executionMachine.next("pending", "fail")).toBeUndefined();
  });

  it("returns a failed step to pending only through a retry or an operator's redrive", () => {
    const eventsLeavingFailed = Object.keys(executionMachine.transitions).filter(
      (event) =>
        executionMachine.next("failed", event as keyof typeof executionMachine.transitions) !== undefined,
    );
    expect(eventsLeavingFailed.sort()).toEqual(["redrive", "retry"]);
    expect(executionMachine.next("failed", "retry")).toBe("pending");
    expect(executionMachine.next("failed", "dispatch")).toBeUndefined();
  });

  it("never leaves succeeded or skipped, and leaves cancelled only for a redrive", () => {
    for (const state of ["succeeded", "skipped", "cancelled"] as const) {
      expect(executionMachine.isTerminal(state)).toBe(true);
      for (const event of Object.keys(
        executionMachine.transitions,
      ) as (keyof typeof executionMachine.transitions)[]) {
        const expected = state === "cancelled" && event === "redrive" ? "pending" : undefined;
        expect(executionMachine.next(state, event)).toBe(expected);
      }
    }
  });

  it("reaches poll_timeout only from polling", () => {
    const sources = executionMachine.states.filter((from) =>
      (Object.keys(executionMachine.transitions) as (keyof typeof executionMachine.transitions)[]).some(
        (event) => executionMachine.next(from, event) === "poll_timeout",
      ),
    );
    expect(sources).toEqual(["polling"]);
  });
});

describe("all machines", () => {
  it("use the entity names stored in events.entity, each once", () => {
    expect(allMachines.map((machine) => machine.entity)).toEqual(["batch", "member", "phase", "execution"]);
  });

  it("recognise their own statuses and nothing else", () => {
    for (const machine of allMachines) {
      for (const state of machine.states) expect(machine.isState(state)).toBe(true);
      expect(machine.isState("unknown")).toBe(false);
      expect(machine.isState("toString")).toBe(false);
    }
  });
});

describe("defineMachine", () => {
  const base = {
    entity: "door",
    initial: "closed",
    states: ["closed", "open"],
    terminal: [],
    transitions: { open: { from: ["closed"], to: "open", description: "push" } },
  } as const;

  it("answers next, sourcesOf and isTerminal from the table", () => {
    const door = defineMachine({ ...base, terminal: ["open"] });
    expect(door.next("closed", "open")).toBe("open");
    expect(door.next("open", "open")).toBeUndefined();
    expect(door.sourcesOf("open")).toEqual(["closed"]);
    expect(door.isTerminal("open")).toBe(true);
    expect(door.isTerminal("closed")).toBe(false);
  });

  it("throws on a malformed table, naming the machine and every problem", () => {
    const malformed = {
      entity: "door",
      initial: "shut",
      states: ["closed", "open"],
      terminal: ["gone"],
      transitions: {
        open: { from: ["closd"], to: "open", description: "push" },
        slam: { from: ["open"], to: "slammed", description: "wind" },
      },
    };
    // Casts: the typo is exactly what the compiler would catch; this guards tables built at runtime.
    expect(() => defineMachine(malformed as unknown as Parameters<typeof defineMachine>[0])).toThrow(
      "State machine 'door' is malformed: initial state 'shut' is not a state; terminal state 'gone' is not a state; " +
        "event 'open' fires from unknown state 'closd'; event 'slam' leads to unknown state 'slammed'",
    );
  });
});
