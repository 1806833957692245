/**
 * Workflow port: durable orchestrations in the durable-task style that Dapr Workflow runs
 * (activities, durable timers, external events, continue-as-new). Workflow code is written once
 * against WorkflowContext, as an async generator that yields tasks and receives their results,
 * and never touches an engine directly: the embedded adapter runs it on durabletask-js's
 * in-process backend, the Dapr adapter on Dapr Workflow.
 *
 * Rules for workflow code (as for every durable-task engine): it is replayed, so it must be
 * deterministic: time from `ctx.now`, I/O only in activities, no randomness.
 */
export interface WorkflowTask<T = unknown> {
  /** Phantom: the result type the task yields back. */
  readonly __result?: T;
}

export interface WorkflowContext {
  readonly instanceId: string;
  /** Replay-safe current time. */
  readonly now: Date;
  readonly isReplaying: boolean;
  callActivity<I, O>(name: string, input: I): WorkflowTask<O>;
  createTimer(fireAt: Date): WorkflowTask<void>;
  waitForExternalEvent<T = unknown>(name: string): WorkflowTask<T>;
  /** Completes with the first task that completes (compare by identity). */
  whenAny(tasks: readonly WorkflowTask[]): WorkflowTask<WorkflowTask>;
  /** Restarts the instance with fresh history (long-running loops). */
  continueAsNew(input: unknown): void;
}

export type WorkflowFunction<I = unknown, O = unknown> = (
  ctx: WorkflowContext,
  input: I,
) => AsyncGenerator<WorkflowTask, O, unknown>;

export type ActivityFunction<I = unknown, O = unknown> = (input: I) => Promise<O>;

export interface WorkflowDefinition<I = unknown, O = unknown> {
  readonly name: string;
  readonly workflow: WorkflowFunction<I, O>;
  readonly activities: Readonly<Record<string, ActivityFunction<never, unknown>>>;
}

export type WorkflowInstanceStatus =
  "running" | "completed" | "failed" | "terminated" | "suspended" | "not_found";

export interface WorkflowEngine {
  /** Registers a workflow and its activities; before start(). */
  register(definition: WorkflowDefinition<never, unknown>): void;
  start(): Promise<void>;
  /**
   * Starts the instance unless it is already running (idempotent); an instance that ended is
   * started afresh. Returns whether a new instance was started.
   */
  ensureInstance(workflowName: string, instanceId: string, input: unknown): Promise<boolean>;
  /** Delivers an external event; buffered until the workflow waits for it. No-op when not running. */
  raiseEvent(instanceId: string, eventName: string, data?: unknown): Promise<void>;
  status(instanceId: string): Promise<WorkflowInstanceStatus>;
  terminate(instanceId: string, reason: string): Promise<void>;
  suspend(instanceId: string): Promise<void>;
  resume(instanceId: string): Promise<void>;
  stop(): Promise<void>;
}
