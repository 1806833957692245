import { z } from "zod";
import { sanitizeErrorMessage } from "@matoolkit/domain";
import type { Logger } from "../../logger.ts";
import type { WorkflowDefinition, WorkflowEngine, WorkflowInstanceStatus } from "../../ports/index.ts";
import { toDurableTaskOrchestrator } from "../../workflow-shared/durable-task-orchestrator.ts";
import {
  DaprWorkflowCallError,
  isInstanceAlreadyExists,
  isInstanceNotFound,
  isTransientLookupFailure,
} from "./dapr-workflow-errors.ts";

/** Lookups of one status before a transient failure is reported (50 ms doubling: ~3 s in all). */
const STATUS_LOOKUP_ATTEMPTS = 6;
import { loadDaprWorkflowSdk, type DaprWorkflowActivityContext } from "./dapr-workflow-sdk.ts";
import { waitForWorkflowBackend } from "./wait-for-workflow-backend.ts";
import { watchWorkflowWorker } from "./worker-watchdog.ts";
import { toWorkflowInstanceStatus } from "./workflow-instance-status.ts";

export interface DaprWorkflowEngineOptions {
  /** The sidecar's host, e.g. 127.0.0.1. */
  readonly daprHost: string;
  /** The sidecar's gRPC API port (DAPR_GRPC_PORT; 50001 for the orchestrator). */
  readonly daprGrpcPort: string;
  /** DAPR_API_TOKEN, when the sidecar requires one (empty: none). */
  readonly apiToken?: string;
  readonly logger: Logger;
}

const optionsSchema = z.object({
  daprHost: z.string().min(1, "daprHost is empty"),
  daprGrpcPort: z
    .string()
    .regex(/^\d{1,5}$/u, "daprGrpcPort is not a port number")
    .refine((port) => Number(port) >= 1 && Number(port) <= 65_535, "daprGrpcPort is out of range"),
  // Empty means none: an unset variable often arrives empty (`DAPR_API_TOKEN=${DAPR_API_TOKEN:-}`).
  apiToken: z.string().optional(),
});

/**
 * The WorkflowEngine on Dapr Workflow: the sidecar keeps every instance durably (actor state in
 * the `matoolkit-state` store) and drives it; this process only hosts the code. Thin by design:
 * workflows reach Dapr's WorkflowContext through the translation the embedded engine uses
 * (workflow-shared), Dapr's WorkflowRuntime hosts them, and DaprWorkflowClient carries the
 * instance operations. What is ours is the port's semantics on top of the sidecar's: start
 * unless running, events only to running instances, statuses in the port's terms.
 */
export function createDaprWorkflowEngine(options: DaprWorkflowEngineOptions): WorkflowEngine {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => issue.message).join("; ");
    throw new Error(`invalid Dapr workflow engine options: ${problems}`);
  }
  const logger = options.logger.child({ component: "workflow-engine" });
  const sdk = loadDaprWorkflowSdk();
  if (!sdk.repeatedSuspendsGuarded) {
    logger.warn(
      { reason: "workflow.suspend_unguarded" },
      "the Dapr workflow SDK's executor has an unknown shape: a workflow suspended twice may hang its worker on resume",
    );
  }
  const sidecar = {
    daprHost: parsed.data.daprHost,
    daprPort: parsed.data.daprGrpcPort,
    // Never undefined: the SDK would fall back to reading DAPR_API_TOKEN itself, and the
    // composition root, not a library, decides what the environment means.
    daprApiToken: parsed.data.apiToken ?? "",
  };
  const runtime = new sdk.WorkflowRuntime(sidecar);
  const client = new sdk.DaprWorkflowClient(sidecar);
  const stopping = new AbortController();
  let startup: Promise<void> | undefined;
  let workerStarted = false;
  let watchdog: { stop(): void } | undefined;
  let stopped = false;

  async function call<T>(operation: string, instanceId: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw new DaprWorkflowCallError(operation, instanceId, error);
    }
  }

  /** The instance's status; a lookup that failed transiently (isTransientLookupFailure) is asked again. */
  async function readStatus(instanceId: string): Promise<WorkflowInstanceStatus> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const state = await client.getWorkflowState(instanceId, false);
        return toWorkflowInstanceStatus(state, sdk.WorkflowRuntimeStatus);
      } catch (error) {
        if (isInstanceNotFound(error)) return "not_found";
        if (attempt >= STATUS_LOOKUP_ATTEMPTS || !isTransientLookupFailure(error)) {
          throw new DaprWorkflowCallError("state lookup", instanceId, error);
        }
        await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      }
    }
  }

  const isActive = (status: WorkflowInstanceStatus) => status === "running" || status === "suspended";

  return {
    register(definition: WorkflowDefinition<never, unknown>) {
      if (startup !== undefined) throw new Error("register workflows before start()");
      runtime.registerWorkflowWithName(definition.name, toDurableTaskOrchestrator(definition));
      for (const [name, activity] of Object.entries(definition.activities)) {
        // Under the name the workflow calls it by, which is what the sidecar schedules.
        runtime.registerActivityWithName(name, async (ctx: DaprWorkflowActivityContext, input: unknown) => {
          try {
            return await activity(input as never);
          } catch (error) {
            const message = sanitizeErrorMessage(error instanceof Error ? error.message : String(error));
            logger.warn(
              { instanceId: ctx.getWorkflowInstanceId(), activity: name, err: message },
              "workflow activity failed",
            );
            // The SDK stores a failure's message and stack in the workflow's history (the state
            // store) and prints it to the console: only the sanitised message leaves here. The
            // workflow still sees a failed task it can catch.
            throw new Error(message);
          }
        });
      }
    },

    start() {
      startup ??= (async () => {
        await waitForWorkflowBackend({
          lookup: (instanceId) => client.getWorkflowState(instanceId, false),
          logger,
          signal: stopping.signal,
        });
        await runtime.start();
        workerStarted = true;
        if (!stopped) watchdog = watchWorkflowWorker({ runtime, logger });
        logger.info("Dapr workflow worker started");
      })();
      return startup;
    },

    async ensureInstance(workflowName, instanceId, input) {
      const current = await readStatus(instanceId);
      if (isActive(current)) return false;
      // daprd 1.16–1.18.3 recreate an ended id on start, dropping its history (orchestrator/
      // create.go `createIfCompleted`). Do not purge first: on real daprd (1.18.1, Redis state) a
      // start right after a purge of the same id sat ~60 s before its first work item, while a
      // plain start runs at once (dapr-workflow-engine.real-dapr.test.ts). A runtime that refuses
      // the id (unique ids enforced) gets the purge, then the start again.
      try {
        await client.scheduleNewWorkflow(workflowName, input, instanceId);
        return true;
      } catch (error) {
        if (!isInstanceAlreadyExists(error)) {
          throw new DaprWorkflowCallError(`start of workflow ${workflowName}`, instanceId, error);
        }
        // Another caller (a reconcile pass, another replica) started it since we looked: that is
        // the outcome we wanted, not a failure.
        const now = await readStatus(instanceId);
        if (isActive(now)) return false;
        if (now !== "not_found") await call("purge", instanceId, () => client.purgeWorkflow(instanceId));
        await call(`start of workflow ${workflowName}`, instanceId, () =>
          client.scheduleNewWorkflow(workflowName, input, instanceId),
        );
        return true;
      }
    },

    async raiseEvent(instanceId, eventName, data) {
      // The port drops events for instances that do not run (as the embedded engine does); what a
      // sidecar does with one for an unknown or ended id is not something to rely on, so look first.
      if (!isActive(await readStatus(instanceId))) return;
      try {
        await client.raiseEvent(instanceId, eventName, data);
      } catch (error) {
        if (isInstanceNotFound(error)) return; // it ended since we looked
        throw new DaprWorkflowCallError(`raise of event ${eventName}`, instanceId, error);
      }
    },

    status: readStatus,

    // The sidecar answers an error for an unknown id (and may for one that ended); the port
    // treats both as nothing to do, as the embedded engine does.
    async terminate(instanceId, reason) {
      if (!isActive(await readStatus(instanceId))) return;
      await call("terminate", instanceId, () => client.terminateWorkflow(instanceId, reason));
    },
    async suspend(instanceId) {
      if ((await readStatus(instanceId)) !== "running") return;
      await call("suspend", instanceId, () => client.suspendWorkflow(instanceId));
    },
    async resume(instanceId) {
      if ((await readStatus(instanceId)) !== "suspended") return;
      await call("resume", instanceId, () => client.resumeWorkflow(instanceId));
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      stopping.abort(new Error("workflow engine stopped"));
      watchdog?.stop();
      await startup?.catch(() => undefined);
      const stopWorker = async () => {
        if (!workerStarted) return;
        // Waits for work items in flight (the SDK bounds that at 30 s). Throws when the worker
        // already gave up on its own (it logs why to the console).
        await runtime.stop().catch((error: unknown) => {
          logger.warn(
            { err: sanitizeErrorMessage(error instanceof Error ? error.message : String(error)) },
            "Dapr workflow worker did not stop cleanly",
          );
        });
      };
      // Side by side: each waits a fixed second after closing its channel (an SDK workaround).
      await Promise.all([stopWorker(), client.stop()]);
    },
  };
}
