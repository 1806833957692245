import { createRequire } from "node:module";
import type { OrchestrationContext } from "@microsoft/durabletask-js";
import type {
  ActivityWorkItem,
  InMemoryOrchestrationBackend as Backend,
  OrchestrationInstance,
} from "@microsoft/durabletask-js/dist/testing/in-memory-backend.js";
import type { ActivityExecutor as ActivityExecutorClass } from "@microsoft/durabletask-js/dist/worker/activity-executor.js";
import type { OrchestrationExecutor as OrchestrationExecutorClass } from "@microsoft/durabletask-js/dist/worker/orchestration-executor.js";
import type { Registry as RegistryClass } from "@microsoft/durabletask-js/dist/worker/registry.js";
import type * as PbModule from "@microsoft/durabletask-js/dist/proto/orchestrator_service_pb.js";
import type * as PbHelperModule from "@microsoft/durabletask-js/dist/utils/pb-helper.util.js";
import type * as DurableTaskModule from "@microsoft/durabletask-js";
import { sanitizeErrorMessage } from "@matoolkit/domain";
import type { Logger } from "../logger.ts";
import type { WorkflowDefinition, WorkflowEngine, WorkflowInstanceStatus } from "../ports/index.ts";
import {
  toDurableTaskOrchestrator,
  type DurableTaskContext,
} from "../workflow-shared/durable-task-orchestrator.ts";

// durabletask-js is CommonJS, and its generated protobuf module defines its exports in a way
// Node's ESM named-export detection misses (they come out undefined under plain Node/tsx while a
// bundler's interop hides it). require() reads them as the package intends.
const require = createRequire(import.meta.url);
const { whenAny } = require("@microsoft/durabletask-js") as typeof DurableTaskModule;
const { InMemoryOrchestrationBackend } =
  require("@microsoft/durabletask-js/dist/testing/in-memory-backend.js") as {
    InMemoryOrchestrationBackend: new () => Backend;
  };
const { ActivityExecutor } = require("@microsoft/durabletask-js/dist/worker/activity-executor.js") as {
  ActivityExecutor: typeof ActivityExecutorClass;
};
const { OrchestrationExecutor } =
  require("@microsoft/durabletask-js/dist/worker/orchestration-executor.js") as {
    OrchestrationExecutor: typeof OrchestrationExecutorClass;
  };
const { Registry } = require("@microsoft/durabletask-js/dist/worker/registry.js") as {
  Registry: typeof RegistryClass;
};
const pb = require("@microsoft/durabletask-js/dist/proto/orchestrator_service_pb.js") as typeof PbModule;
const pbh = require("@microsoft/durabletask-js/dist/utils/pb-helper.util.js") as typeof PbHelperModule;

export interface DurableTaskEngineOptions {
  readonly logger: Logger;
  /** Activities running at once; activities do SQL work, so keep this near the pool size. */
  readonly maxConcurrentActivities?: number;
  /** Sleep when there is no work (the backend has no wake-up signal). */
  readonly idlePollMs?: number;
}

/**
 * The embedded WorkflowEngine: durabletask-js's in-memory backend (the engine Dapr Workflow is
 * built on), driven by our own small worker loop instead of its test worker, which spins the CPU
 * when idle, runs one activity at a time and logs to the console.
 *
 * In-memory means a restart forgets every instance. That is acceptable because workflows here
 * hold no state of their own: they read it from SQL in activities, and the host restarts an
 * instance for every unfinished batch at start-up (see services/orchestrator/src/workflow).
 */
export function createDurableTaskWorkflowEngine(options: DurableTaskEngineOptions): WorkflowEngine {
  const logger = options.logger.child({ component: "workflow-engine" });
  const engineLogger = toEngineLogger(logger);
  const backend = new InMemoryOrchestrationBackend();
  const registry = new Registry();
  const maxActivities = options.maxConcurrentActivities ?? 4;
  const idlePollMs = options.idlePollMs ?? 10;
  const inflight = new Set<Promise<void>>();
  let running = false;
  let loop: Promise<void> | undefined;

  async function processOrchestration(instance: OrchestrationInstance): Promise<void> {
    try {
      const executor = new OrchestrationExecutor(registry, engineLogger);
      const result = await executor.execute(
        instance.instanceId,
        instance.history,
        instance.pendingEvents,
        instance.executionId,
      );
      backend.completeOrchestration(
        instance.instanceId,
        instance.completionToken,
        result.actions,
        result.customStatus,
      );
    } catch (error) {
      logger.error({ instanceId: instance.instanceId, err: safe(error) }, "workflow execution failed");
      const failed = pbh.newCompleteOrchestrationAction(
        -1,
        pb.OrchestrationStatus.ORCHESTRATION_STATUS_FAILED,
        undefined,
        pbh.newFailureDetails(error instanceof Error ? error : new Error(String(error))),
      );
      backend.completeOrchestration(instance.instanceId, instance.completionToken, [failed]);
    }
  }

  async function processActivity(item: ActivityWorkItem): Promise<void> {
    try {
      const executor = new ActivityExecutor(registry, engineLogger);
      const result = await executor.execute(item.instanceId, item.name, item.taskId, item.input);
      backend.completeActivity(item.instanceId, item.taskId, result);
    } catch (error) {
      logger.warn(
        { instanceId: item.instanceId, activity: item.name, err: safe(error) },
        "workflow activity failed",
      );
      backend.completeActivity(
        item.instanceId,
        item.taskId,
        undefined,
        error instanceof Error ? error : new Error(String(error)),
      );
    }
  }

  async function runLoop(): Promise<void> {
    while (running) {
      let worked = false;
      const orchestration = backend.getNextOrchestrationWorkItem();
      if (orchestration !== undefined) {
        await processOrchestration(orchestration);
        worked = true;
      }
      while (inflight.size < maxActivities) {
        const activity = backend.getNextActivityWorkItem();
        if (activity === undefined) break;
        const task: Promise<void> = processActivity(activity).finally(() => inflight.delete(task));
        inflight.add(task);
        worked = true;
      }
      if (!worked) await new Promise((resolveIdle) => setTimeout(resolveIdle, idlePollMs));
    }
    await Promise.allSettled(inflight);
  }

  function statusOf(instance: OrchestrationInstance | undefined): WorkflowInstanceStatus {
    if (instance === undefined) return "not_found";
    switch (instance.status) {
      case pb.OrchestrationStatus.ORCHESTRATION_STATUS_RUNNING:
      case pb.OrchestrationStatus.ORCHESTRATION_STATUS_PENDING:
      case pb.OrchestrationStatus.ORCHESTRATION_STATUS_CONTINUED_AS_NEW:
        return "running";
      case pb.OrchestrationStatus.ORCHESTRATION_STATUS_SUSPENDED:
        return "suspended";
      case pb.OrchestrationStatus.ORCHESTRATION_STATUS_COMPLETED:
        return "completed";
      case pb.OrchestrationStatus.ORCHESTRATION_STATUS_TERMINATED:
        return "terminated";
      default:
        return "failed";
    }
  }

  return {
    register(definition: WorkflowDefinition<never, unknown>) {
      if (running) throw new Error("register workflows before start()");
      const orchestrator = toDurableTaskOrchestrator(definition);
      registry.addNamedOrchestrator(definition.name, (ctx: OrchestrationContext, input: unknown) =>
        orchestrator(durableTaskJsContext(ctx), input),
      );
      for (const [name, activity] of Object.entries(definition.activities)) {
        registry.addNamedActivity(name, (_ctx: unknown, input: unknown) => activity(input as never));
      }
    },
    async start() {
      if (running) return;
      running = true;
      loop = runLoop();
    },
    async ensureInstance(workflowName, instanceId, input) {
      const current = statusOf(backend.getInstance(instanceId));
      if (current === "running" || current === "suspended") return false;
      if (current !== "not_found") backend.purge(instanceId);
      backend.createInstance(instanceId, workflowName, JSON.stringify(input));
      return true;
    },
    async raiseEvent(instanceId, eventName, data) {
      const current = statusOf(backend.getInstance(instanceId));
      if (current !== "running" && current !== "suspended") return;
      backend.raiseEvent(instanceId, eventName, data === undefined ? undefined : JSON.stringify(data));
    },
    async status(instanceId) {
      return statusOf(backend.getInstance(instanceId));
    },
    async terminate(instanceId, reason) {
      if (backend.getInstance(instanceId) !== undefined)
        backend.terminate(instanceId, JSON.stringify(reason));
    },
    async suspend(instanceId) {
      if (backend.getInstance(instanceId) !== undefined) backend.suspend(instanceId);
    },
    async resume(instanceId) {
      if (backend.getInstance(instanceId) !== undefined) backend.resume(instanceId);
    },
    async stop() {
      running = false;
      await loop;
      backend.reset();
    },
  };
}

/** durabletask-js's context under the names the shared translation uses (Dapr Workflow's). */
function durableTaskJsContext(ctx: OrchestrationContext): DurableTaskContext {
  return {
    getWorkflowInstanceId: () => ctx.instanceId,
    getCurrentUtcDateTime: () => ctx.currentUtcDateTime,
    isReplaying: () => ctx.isReplaying,
    callActivity: (name, input) => ctx.callActivity(name, input),
    createTimer: (fireAt) => ctx.createTimer(fireAt),
    waitForExternalEvent: (name) => ctx.waitForExternalEvent(name),
    whenAny: (tasks) => whenAny(tasks),
    continueAsNew: (input, saveEvents) => ctx.continueAsNew(input, saveEvents),
  };
}

function toEngineLogger(logger: Logger) {
  // The engine narrates every replay at info level; keep that at debug.
  return {
    error: (message: string) => logger.error(sanitizeErrorMessage(message, 500)),
    warn: (message: string) => logger.warn(sanitizeErrorMessage(message, 500)),
    info: (message: string) => logger.debug(message),
    debug: (message: string) => logger.trace(message),
  };
}

function safe(error: unknown): string {
  return sanitizeErrorMessage(error instanceof Error ? error.message : String(error));
}
