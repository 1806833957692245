import { defineMachine } from "./define-machine.ts";

/**
 * 000 "State Machines" → Batch Status. Manual and automated batches share one machine.
 * `cancelled` is not in 000 (which lists POST /api/batches/{id}/cancel but no status for it): an
 * operator's cancel ends the batch from any non-terminal state, and nothing moves it on.
 * `paused` (issue 12): an operator's brake on an active batch; nothing new is sent until `resume`.
 * Results of jobs already out are still recorded, so a paused batch can still end. `reopen`: a
 * redrive of failed members brings an ended (not cancelled) batch back to `active`.
 */
export const batchMachine = defineMachine({
  entity: "batch",
  initial: "detected",
  states: ["detected", "init_dispatched", "active", "paused", "completed", "failed", "cancelled"],
  terminal: ["completed", "failed", "cancelled"],
  transitions: {
    dispatch_init: {
      from: ["detected"],
      to: "init_dispatched",
      description: "init steps sent to the orchestrator",
    },
    activate: {
      from: ["detected", "init_dispatched"],
      to: "active",
      description: "init complete, or the runbook has no init",
    },
    complete: {
      from: ["active", "paused"],
      to: "completed",
      description: "all phases terminal, at least one completed",
    },
    fail: {
      from: ["detected", "init_dispatched", "active", "paused"],
      to: "failed",
      description: "an init step failed, or every phase failed",
    },
    cancel: {
      from: ["detected", "init_dispatched", "active", "paused"],
      to: "cancelled",
      description: "cancelled by an operator (not in 000)",
    },
    pause: {
      from: ["active"],
      to: "paused",
      description: "paused by an operator: no new job, phase, poll or retry is sent",
    },
    resume: {
      from: ["paused"],
      to: "active",
      description: "resumed by an operator: what fell due meanwhile is sent",
    },
    reopen: {
      from: ["completed", "failed"],
      to: "active",
      description: "an operator redrove failed members",
    },
  },
});
export type BatchStatus = (typeof batchMachine.states)[number];
export type BatchEvent = keyof typeof batchMachine.transitions;

/** 000 "State Machines" → Member Status. */
export const memberMachine = defineMachine({
  entity: "member",
  initial: "active",
  states: ["active", "removed", "failed"],
  terminal: ["removed", "failed"],
  transitions: {
    remove: { from: ["active"], to: "removed", description: "no longer in the data source results" },
    fail: { from: ["active"], to: "failed", description: "a step failure isolated this member" },
    redrive: { from: ["failed"], to: "active", description: "an operator redrove it from its failed step" },
  },
});
export type MemberStatus = (typeof memberMachine.states)[number];
export type MemberEvent = keyof typeof memberMachine.transitions;

/**
 * 000 "State Machines" → Phase Execution Status, plus `cancelled` (not in 000): the batch was
 * cancelled before the phase ended. `awaiting_approval` (issue 30, not in 000): a phase whose
 * runbook says `approval: required` fell due (or was advanced) and waits for an operator's go or
 * no-go (or its approval timeout) before anything of it is sent.
 */
export const phaseMachine = defineMachine({
  entity: "phase",
  initial: "pending",
  states: [
    "pending",
    "awaiting_approval",
    "dispatched",
    "completed",
    "failed",
    "skipped",
    "superseded",
    "cancelled",
  ],
  terminal: ["completed", "failed", "skipped", "superseded", "cancelled"],
  transitions: {
    dispatch: { from: ["pending"], to: "dispatched", description: "phase fell due (or was advanced)" },
    await_approval: {
      from: ["pending"],
      to: "awaiting_approval",
      description: "phase fell due (or was advanced) and needs an operator's approval",
    },
    approve: {
      from: ["awaiting_approval"],
      to: "dispatched",
      description: "approved by an operator (or by its approval timeout): sent as if just due",
    },
    reject: {
      from: ["awaiting_approval"],
      to: "failed",
      description: "rejected by an operator (or by its approval timeout): phase.rejected",
    },
    complete: {
      from: ["dispatched"],
      to: "completed",
      description: "all steps terminal, at least one member succeeded",
    },
    fail: { from: ["dispatched"], to: "failed", description: "all steps terminal, no member succeeded" },
    skip: { from: ["pending"], to: "skipped", description: "overdue_behavior = ignore" },
    supersede: {
      from: ["pending", "awaiting_approval"],
      to: "superseded",
      description: "replaced by a new runbook version",
    },
    cancel: {
      from: ["pending", "awaiting_approval", "dispatched"],
      to: "cancelled",
      description: "its batch was cancelled (not in 000)",
    },
    reopen: {
      from: ["completed", "failed"],
      to: "dispatched",
      description: "an operator redrove a failed member of it",
    },
  },
});
export type PhaseStatus = (typeof phaseMachine.states)[number];
export type PhaseEvent = keyof typeof phaseMachine.transitions;

/**
 * 000 "State Machines" → Step/Init Execution Status; step_executions and init_executions share it.
 * A poll re-dispatch keeps the step in `polling` (001 "leave status as polling"), so it is not an
 * event here: only the poll bookkeeping columns change. `skipped` (issue 30) is terminal and final:
 * a redrive never reopens it, as it never failed.
 */
export const executionMachine = defineMachine({
  entity: "execution",
  initial: "pending",
  states: ["pending", "dispatched", "succeeded", "failed", "polling", "poll_timeout", "cancelled", "skipped"],
  terminal: ["succeeded", "failed", "poll_timeout", "cancelled", "skipped"],
  transitions: {
    dispatch: { from: ["pending"], to: "dispatched", description: "job sent to a worker" },
    succeed: { from: ["dispatched", "polling"], to: "succeeded", description: "worker returned success" },
    fail: { from: ["dispatched", "polling"], to: "failed", description: "worker returned an error" },
    // Not in 000: a step whose templates cannot be resolved (or whose `when:` cannot be decided,
    // issue 30) fails instead of being dispatched. A separate event, so a late or duplicate worker
    // result (`fail`) can never fail a pending retry.
    fail_to_dispatch: {
      from: ["pending"],
      to: "failed",
      description: "templates could not be resolved, or its when: could not be decided",
    },
    // Not in 000 (issue 30): a phase step whose `when:` (or its phase's) is false when its turn
    // comes. Never sent to a worker; counts as done for the member's chain and the phase.
    skip: {
      from: ["pending"],
      to: "skipped",
      description: "its when: condition was false: not run, counts as done",
    },
    start_polling: { from: ["dispatched"], to: "polling", description: "worker returned {complete: false}" },
    time_out_polling: { from: ["polling"], to: "poll_timeout", description: "poll.timeout elapsed" },
    retry: {
      from: ["failed", "poll_timeout"],
      to: "pending",
      description: "retries left: scheduled retry-check",
    },
    cancel: {
      from: ["pending", "dispatched", "polling"],
      to: "cancelled",
      description: "member removed or failed, or batch cancelled",
    },
    redrive: {
      from: ["failed", "poll_timeout", "cancelled"],
      to: "pending",
      description: "an operator redrove its failed member: runs again with a new job id",
    },
  },
});
export type ExecutionStatus = (typeof executionMachine.states)[number];
export type ExecutionEvent = keyof typeof executionMachine.transitions;

export const allMachines = [batchMachine, memberMachine, phaseMachine, executionMachine] as const;
