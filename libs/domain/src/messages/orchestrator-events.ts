import { z } from "zod";
import { messageMemberKey, messageName } from "./message-text.ts";

/**
 * Messages on the `orchestrator-events` topic, in the exact wire format of 000 "Message Types":
 * PascalCase JSON bodies, the type carried in the `MessageType` application property (not in the
 * body), so the existing PowerShell cloud worker and the .NET tools interoperate unchanged.
 * Unknown body fields are tolerated (older senders add some, see 001) but never required.
 */
const id = z.number().int().positive();

export const batchInitMessageSchema = z.object({
  BatchId: id,
  RunbookName: messageName,
  RunbookVersion: z.number().int().positive(),
});
export type BatchInitMessage = z.infer<typeof batchInitMessageSchema>;

export const phaseDueMessageSchema = z.object({
  BatchId: id,
  RunbookName: messageName,
  RunbookVersion: z.number().int().positive(),
  PhaseName: messageName,
  PhaseExecutionId: id,
});
export type PhaseDueMessage = z.infer<typeof phaseDueMessageSchema>;

export const memberAddedMessageSchema = z.object({
  BatchId: id,
  MemberKey: messageMemberKey,
  BatchMemberId: id,
});
export type MemberAddedMessage = z.infer<typeof memberAddedMessageSchema>;

export const memberRemovedMessageSchema = memberAddedMessageSchema;
export type MemberRemovedMessage = z.infer<typeof memberRemovedMessageSchema>;

/**
 * Not in 000 (issue 12): an operator redrove this failed member (POST /api/batches/{id}/redrive).
 * Its failed steps are already `pending` again; the orchestrator creates the steps it never got
 * (phases that ran while it was failed) and starts it. Internal, like batch-changed.
 */
export const memberRedrivenMessageSchema = z.object({
  BatchId: id,
  BatchMemberId: id,
});
export type MemberRedrivenMessage = z.infer<typeof memberRedrivenMessageSchema>;

export const pollCheckMessageSchema = z.object({
  StepExecutionId: id,
  IsInitStep: z.boolean(),
});
export type PollCheckMessage = z.infer<typeof pollCheckMessageSchema>;

export const retryCheckMessageSchema = pollCheckMessageSchema;
export type RetryCheckMessage = z.infer<typeof retryCheckMessageSchema>;

/**
 * Not in 000: an internal nudge to the batch's workflow (see libs/commands notifyBatchChanged).
 * It travels on orchestrator-events like the others; workers never see it.
 */
export const batchChangedMessageSchema = z.object({ BatchId: id });
export type BatchChangedMessage = z.infer<typeof batchChangedMessageSchema>;

export const orchestratorEventSchemas = {
  "batch-init": batchInitMessageSchema,
  "phase-due": phaseDueMessageSchema,
  "member-added": memberAddedMessageSchema,
  "member-removed": memberRemovedMessageSchema,
  "member-redriven": memberRedrivenMessageSchema,
  "poll-check": pollCheckMessageSchema,
  "retry-check": retryCheckMessageSchema,
  "batch-changed": batchChangedMessageSchema,
} as const;

export type OrchestratorEventType = keyof typeof orchestratorEventSchemas;
export const orchestratorEventTypes = Object.keys(orchestratorEventSchemas) as OrchestratorEventType[];

/** A decoded orchestrator event: the `MessageType` property joined to its typed body. */
export type OrchestratorEvent = {
  [T in OrchestratorEventType]: {
    readonly type: T;
    readonly body: z.infer<(typeof orchestratorEventSchemas)[T]>;
  };
}[OrchestratorEventType];

export function isOrchestratorEventType(value: string | undefined): value is OrchestratorEventType {
  return value !== undefined && Object.hasOwn(orchestratorEventSchemas, value);
}
