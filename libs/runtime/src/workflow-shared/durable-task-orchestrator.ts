import type { WorkflowContext, WorkflowDefinition, WorkflowTask } from "../ports/index.ts";

/**
 * The durable-task calls our WorkflowContext is made of, named as Dapr Workflow's WorkflowContext
 * names them, so Dapr's context is one as it is and the embedded engine adapts durabletask-js's
 * OrchestrationContext to it. Both engines share this one translation, so a workflow behaves the
 * same on either.
 *
 * Tasks are the engine's own objects, handed to the workflow unwrapped: the engine must get back
 * exactly what it created when the workflow yields them, and `whenAny` completes with one of them,
 * which is how a workflow tells which task won (by identity).
 */
export interface DurableTaskContext {
  getWorkflowInstanceId(): string;
  getCurrentUtcDateTime(): Date;
  isReplaying(): boolean;
  callActivity(name: string, input: unknown): unknown;
  createTimer(fireAt: Date): unknown;
  waitForExternalEvent(name: string): unknown;
  whenAny(tasks: never[]): unknown;
  continueAsNew(input: unknown, saveEvents: boolean): void;
}

/** The orchestrator function an engine registers for one of our workflow definitions. */
export type DurableTaskOrchestrator = (
  ctx: DurableTaskContext,
  input: unknown,
) => AsyncGenerator<WorkflowTask, unknown, unknown>;

export function toDurableTaskOrchestrator(
  definition: WorkflowDefinition<never, unknown>,
): DurableTaskOrchestrator {
  return (ctx, input) => definition.workflow(toWorkflowContext(ctx), input as never);
}

function toWorkflowContext(ctx: DurableTaskContext): WorkflowContext {
  return {
    // Getters, not copies: the replay-safe time and the replay flag move as the engine replays.
    get instanceId() {
      return ctx.getWorkflowInstanceId();
    },
    get now() {
      return ctx.getCurrentUtcDateTime();
    },
    get isReplaying() {
      return ctx.isReplaying();
    },
    callActivity: (name, input) => ctx.callActivity(name, input) as WorkflowTask<never>,
    createTimer: (fireAt) => ctx.createTimer(fireAt) as WorkflowTask<void>,
    waitForExternalEvent: (name) => ctx.waitForExternalEvent(name) as WorkflowTask<never>,
    whenAny: (tasks) => ctx.whenAny(tasks as never[]) as WorkflowTask<WorkflowTask>,
    // saveEvents: an event that arrived but was not consumed yet (a batch nudge raised while the
    // generation ends) is carried into the next generation instead of being lost.
    continueAsNew: (input) => ctx.continueAsNew(input, true),
  };
}
