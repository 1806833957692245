import type { OutboxMessage } from "@matoolkit/db";
import {
  routingProperties,
  topics,
  type BatchInitMessage,
  type MemberAddedMessage,
  type MemberRemovedMessage,
  type OrchestratorEventType,
  type PhaseDueMessage,
} from "@matoolkit/domain";

/**
 * Messages to the orchestrator (000 "Message Types") as outbox rows, queued in the transaction of
 * the change that causes them, by the scheduler, the admin API and the batch workflow alike. Message ids are derived from what they are about,
 * so a message queued twice (the admin API's advance, a workflow, a retried tick) is delivered
 * once: the bus dedupes by id.
 */
function event(type: OrchestratorEventType, messageId: string, body: unknown): OutboxMessage {
  return {
    messageId,
    topic: topics.orchestratorEvents,
    properties: { [routingProperties.messageType]: type },
    body,
  };
}

/** Same id as the admin API's advance: one batch-init per batch and runbook version. */
export function batchInitMessage(body: BatchInitMessage): OutboxMessage {
  return event("batch-init", `batch-init:${body.BatchId}:${body.RunbookVersion}`, body);
}

export function phaseDueMessage(body: PhaseDueMessage): OutboxMessage {
  return event("phase-due", `phase-due:${body.PhaseExecutionId}`, body);
}

export function memberAddedMessage(body: MemberAddedMessage): OutboxMessage {
  return event("member-added", `member-added:${body.BatchMemberId}`, body);
}

export function memberRemovedMessage(body: MemberRemovedMessage): OutboxMessage {
  return event("member-removed", `member-removed:${body.BatchMemberId}`, body);
}
