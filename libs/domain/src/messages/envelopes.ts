import type {
  BatchChangedMessage,
  BatchInitMessage,
  MemberAddedMessage,
  MemberRedrivenMessage,
  MemberRemovedMessage,
  OrchestratorEventType,
  PhaseDueMessage,
  PollCheckMessage,
} from "./orchestrator-events.ts";
import { routingProperties, topics, type Topic } from "./topics.ts";
import type { WorkerJobMessage, WorkerResultMessage } from "./worker-messages.ts";

/**
 * Every message the services send, built in ONE place: the message id is what the bus dedupes on
 * (000: duplicate detection on MessageId), so two senders of "the same" message must build the
 * same id, and two different messages never may. Each builder says what its id is derived from.
 * The shape is what the outbox stores and what the bus publishes.
 */
export interface MessageEnvelope {
  readonly messageId: string;
  readonly topic: Topic;
  readonly properties: Readonly<Record<string, string>>;
  readonly body: unknown;
  /** Scheduled delivery; absent means now. */
  readonly deliverAt?: Date;
}

/** Which table an execution lives in; part of job ids and self-check ids. */
export type ExecutionKind = "step" | "init";

export interface ExecutionAddress {
  readonly kind: ExecutionKind;
  readonly id: number;
}

/** Which run of an execution: operator redrives (issue 12), then retries, then polls. */
export interface ExecutionAttempt {
  /** 0 until an operator redrives the execution; absent counts as 0. */
  readonly redriveCount?: number;
  readonly retryCount: number;
  readonly pollCount: number;
}

/**
 * Worker job ids are unique per attempt so duplicate detection never swallows a retry or a poll
 * (000 "Retry Protocol": `step-{id}-retry-{n}` / `init-{id}-retry-{n}`, then `-poll-{n}`), nor a
 * redrive (`step-{id}-redrive-{n}`, whose retries and polls count from zero again): the worker
 * remembers every job id it ran for 7 days and would answer a reused one from memory.
 */
export function jobIdFor(execution: ExecutionAddress, attempt: ExecutionAttempt): string {
  let jobId = `${execution.kind}-${execution.id}`;
  if ((attempt.redriveCount ?? 0) > 0) jobId += `-redrive-${attempt.redriveCount}`;
  if (attempt.retryCount > 0) jobId += `-retry-${attempt.retryCount}`;
  if (attempt.pollCount > 0) jobId += `-poll-${attempt.pollCount}`;
  return jobId;
}

function orchestratorEvent(
  type: OrchestratorEventType,
  messageId: string,
  body: unknown,
  deliverAt?: Date,
): MessageEnvelope {
  return {
    messageId,
    topic: topics.orchestratorEvents,
    properties: { [routingProperties.messageType]: type },
    body,
    ...(deliverAt === undefined ? {} : { deliverAt }),
  };
}

/** One batch-init per batch and runbook version (the admin API's advance and the workflow alike). */
export function batchInitEnvelope(body: BatchInitMessage): MessageEnvelope {
  return orchestratorEvent("batch-init", `batch-init:${body.BatchId}:${body.RunbookVersion}`, body);
}

/** One phase-due per phase execution. */
export function phaseDueEnvelope(body: PhaseDueMessage): MessageEnvelope {
  return orchestratorEvent("phase-due", `phase-due:${body.PhaseExecutionId}`, body);
}

/**
 * The phase-due a resume sends (issue 12): one per phase and resume, `resume` being how many
 * times the batch has been resumed, so the bus never drops it as a duplicate of the phase's first
 * phase-due (which arrived while paused and started nothing) nor of an earlier resume's.
 */
export function phaseResumeEnvelope(body: PhaseDueMessage, resume: number): MessageEnvelope {
  return orchestratorEvent("phase-due", `phase-due:${body.PhaseExecutionId}:resume-${resume}`, body);
}

/** One member-added per member row (a re-added member is a new row). */
export function memberAddedEnvelope(body: MemberAddedMessage): MessageEnvelope {
  return orchestratorEvent("member-added", `member-added:${body.BatchMemberId}`, body);
}

export function memberRemovedEnvelope(body: MemberRemovedMessage): MessageEnvelope {
  return orchestratorEvent("member-removed", `member-removed:${body.BatchMemberId}`, body);
}

/**
 * One member-redriven per redrive of a member: `redrive` is the member's redrive count (1 for its
 * first), so a second redrive is not dropped as a duplicate of the first.
 */
export function memberRedrivenEnvelope(body: MemberRedrivenMessage, redrive: number): MessageEnvelope {
  return orchestratorEvent("member-redriven", `member-redriven:${body.BatchMemberId}:${redrive}`, body);
}

/** A nudge: unique per call, since two nudges in one dedupe window must both arrive. */
export function batchChangedEnvelope(body: BatchChangedMessage, reason: string): MessageEnvelope {
  const unique = `${Date.now()}:${Math.random().toString(36).slice(2, 8)}`;
  return orchestratorEvent("batch-changed", `batch-changed:${body.BatchId}:${reason}:${unique}`, body);
}

/**
 * poll-check / retry-check of one execution's attempt, delivered at `at` (absent: now). The
 * orchestrator's timer and the scheduler's poll sweep build the same id, so they never double-poll.
 */
export function selfCheckEnvelope(
  type: Extract<OrchestratorEventType, "poll-check" | "retry-check">,
  execution: ExecutionAddress,
  attempt: number,
  at?: Date,
  redriveCount = 0,
): MessageEnvelope {
  const body: PollCheckMessage = { StepExecutionId: execution.id, IsInitStep: execution.kind === "init" };
  // A redriven execution counts its retries and polls from zero again: its checks need ids of
  // their own, or the bus would drop them as duplicates of the first run's.
  const run = redriveCount > 0 ? `redrive-${redriveCount}:` : "";
  return orchestratorEvent(type, `${type}:${execution.kind}:${execution.id}:${run}${attempt}`, body, at);
}

/**
 * The poll-check / retry-check a resume sends again (issue 12) for an execution's attempt, with
 * an id of its own per resume: the original check was delivered while paused and did nothing,
 * and the bus would drop a second one with the same id.
 */
export function resumeCheckEnvelope(
  type: Extract<OrchestratorEventType, "poll-check" | "retry-check">,
  execution: ExecutionAddress,
  args: { attempt: number; resume: number; at?: Date; redriveCount?: number },
): MessageEnvelope {
  const original = selfCheckEnvelope(type, execution, args.attempt, args.at, args.redriveCount);
  return { ...original, messageId: `${original.messageId}:resume-${args.resume}` };
}

/** One message per job id (so per attempt), routed to its worker pool. */
export function workerJobEnvelope(job: WorkerJobMessage): MessageEnvelope {
  return {
    messageId: `job:${job.JobId}`,
    topic: topics.workerJobs,
    properties: { [routingProperties.workerId]: job.WorkerId },
    body: job,
  };
}

/**
 * The job sent again while its execution still waits for a result (stalled-jobs.ts): an id of its
 * own per round, as the bus drops a copy under the first id. The worker runs a job once per
 * JobId whatever the message id (its idempotency key), so a copy of a job that did arrive only
 * republishes its stored result or finds it running.
 */
export function resentWorkerJobEnvelope(job: WorkerJobMessage, round: number): MessageEnvelope {
  const original = workerJobEnvelope(job);
  return { ...original, messageId: `${original.messageId}:resend-${round}` };
}

/** One result per job id: a republished stored result is dropped by the bus as a duplicate. */
export function workerResultEnvelope(result: WorkerResultMessage, workerId: string): MessageEnvelope {
  return {
    messageId: `result:${result.JobId}`,
    topic: topics.workerResults,
    properties: { [routingProperties.workerId]: workerId },
    body: result,
  };
}
