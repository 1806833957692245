/** The parts of a durable-task history event the guard reads (Dapr's protobuf HistoryEvent). */
interface HistoryEventLike {
  getEventtypeCase(): number;
}

/** The part of @dapr/dapr 3.18's OrchestrationExecutor the guard wraps. */
interface ExecutorPrototype {
  execute(instanceId: string, oldEvents: HistoryEventLike[], newEvents: HistoryEventLike[]): Promise<unknown>;
  [guarded]?: true;
}

const guarded = Symbol.for("matoolkit.repeatedSuspendGuard");

/**
 * Makes Dapr's workflow worker ignore a suspend of a workflow that is already suspended.
 *
 * Why: @dapr/dapr 3.18.0 (the newest release) ships its own copy of durabletask-js's
 * orchestration executor from before microsoft/durabletask-js#306 (fixing #202). On
 * ExecutionResumed it replays the events it buffered while suspended by iterating its own buffer;
 * a buffered second ExecutionSuspended suspends it again, every later event is pushed onto the
 * array being iterated, and the loop never ends. The work item never returns, the process's event
 * loop starves (only microtasks run), and every turn buffers one more event and logs "Suspended,
 * buffering event" until the process runs out of heap (seen on daprd 1.18.1: the test process
 * grew past 4 GB in the pause scenario). A history gets two suspends when two callers suspend
 * before the first one is applied: daprd 1.18 applies a suspend through the workflow's inbox,
 * and the status reads RUNNING until then, so a second nudge of a paused batch suspends again.
 *
 * How: before the executor sees a work item, an ExecutionSuspended that follows another one with
 * no ExecutionResumed in between is left out. Suspending a suspended instance changes nothing
 * (DurableTask.Core ignores it the same way, Azure/durabletask#764), so the replay's outcome is
 * the same and the loop cannot start. Returns false when the SDK's shape is not the one known.
 */
export function guardAgainstRepeatedSuspends(
  executorClass: unknown,
  eventTypes: { readonly EXECUTIONSUSPENDED: number; readonly EXECUTIONRESUMED: number },
): boolean {
  const prototype = (executorClass as { prototype?: ExecutorPrototype } | undefined)?.prototype;
  if (prototype === undefined || typeof prototype.execute !== "function") return false;
  if (prototype[guarded] === true) return true;
  const execute = prototype.execute;
  prototype.execute = function (this: unknown, instanceId, oldEvents, newEvents) {
    let suspended = false;
    const keep = (event: HistoryEventLike): boolean => {
      const type = event.getEventtypeCase();
      if (type === eventTypes.EXECUTIONRESUMED) suspended = false;
      if (type !== eventTypes.EXECUTIONSUSPENDED) return true;
      if (suspended) return false;
      suspended = true;
      return true;
    };
    // One pass over the whole history in order: old events first, then the new ones.
    const oldKept = oldEvents.filter(keep);
    const newKept = newEvents.filter(keep);
    // The executor needs at least one new event; a work item of repeated suspends alone keeps one.
    return execute.call(this, instanceId, oldKept, newKept.length > 0 ? newKept : newEvents.slice(0, 1));
  };
  prototype[guarded] = true;
  return true;
}
