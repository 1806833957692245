import { z } from "zod";
import { messageName } from "./message-text.ts";

/** 000 "Message Types" 7 and 8: the orchestrator ↔ worker contract, byte-compatible with ps-cloud-worker. */
export const correlationDataSchema = z.object({
  StepExecutionId: z.number().int().positive(),
  IsInitStep: z.boolean(),
  RunbookName: messageName,
  RunbookVersion: z.number().int().positive(),
});
export type CorrelationData = z.infer<typeof correlationDataSchema>;

export const workerJobMessageSchema = z.object({
  JobId: messageName,
  BatchId: z.number().int().positive(),
  WorkerId: messageName,
  FunctionName: messageName,
  Parameters: z.record(z.string(), z.unknown()),
  CorrelationData: correlationDataSchema,
});
export type WorkerJobMessage = z.infer<typeof workerJobMessageSchema>;

// No zod defaults here: a parsed message must re-serialize to exactly the keys it arrived with
// (byte compatibility with ps-cloud-worker); readers apply `IsThrottled ?? false`, `Attempts ?? 1`.
export const workerErrorSchema = z.object({
  Message: z.string(),
  Type: z.string().nullable().optional(),
  IsThrottled: z.boolean().optional(),
  Attempts: z.number().int().nonnegative().optional(),
});
export type WorkerError = z.infer<typeof workerErrorSchema>;

export const workerResultStatuses = ["Success", "Failure"] as const;

export const workerResultMessageSchema = z.object({
  JobId: messageName,
  Status: z.enum(workerResultStatuses),
  /** How the worker typed Result: Object, Boolean, String, Number, Null… (informational). */
  ResultType: z.string().nullable().optional(),
  Result: z.unknown().optional(),
  Error: workerErrorSchema.nullable().optional(),
  DurationMs: z.number().nonnegative().optional(),
  Timestamp: z.string().optional(),
  CorrelationData: correlationDataSchema,
});
export type WorkerResultMessage = z.infer<typeof workerResultMessageSchema>;
