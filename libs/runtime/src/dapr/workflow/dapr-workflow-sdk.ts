import { createRequire } from "node:module";
import type * as DaprWorkflowClientModule from "@dapr/dapr/workflow/client/DaprWorkflowClient.js";
import type * as WorkflowActivityContextModule from "@dapr/dapr/workflow/runtime/WorkflowActivityContext.js";
import type * as WorkflowRuntimeModule from "@dapr/dapr/workflow/runtime/WorkflowRuntime.js";
import type * as WorkflowRuntimeStatusModule from "@dapr/dapr/workflow/runtime/WorkflowRuntimeStatus.js";
import type * as DaprPbModule from "@dapr/dapr/workflow/internal/durabletask/proto/orchestrator_service_pb.js";
import type * as DaprPbHelperModule from "@dapr/dapr/workflow/internal/durabletask/utils/pb-helper.util.js";
import { guardAgainstRepeatedSuspends } from "./repeated-suspend-guard.ts";

// These are CommonJS modules: seen from ESM, `default` is their module.exports, and the class is
// that object's `default` (what require() returns it under).
type WorkflowRuntimeClass = typeof WorkflowRuntimeModule.default.default;
type DaprWorkflowClientClass = typeof DaprWorkflowClientModule.default.default;
export type DaprWorkflowActivityContext = InstanceType<typeof WorkflowActivityContextModule.default.default>;

export interface DaprWorkflowSdk {
  readonly WorkflowRuntime: WorkflowRuntimeClass;
  readonly DaprWorkflowClient: DaprWorkflowClientClass;
  readonly WorkflowRuntimeStatus: typeof WorkflowRuntimeStatusModule.WorkflowRuntimeStatus;
  /** False when the SDK's executor has an unknown shape (repeated-suspend-guard.ts). */
  repeatedSuspendsGuarded: boolean;
}

let loaded: DaprWorkflowSdk | undefined;

/**
 * Dapr's workflow SDK, loaded on first use rather than when this package is imported, and after
 * durabletask-js's protobuf module. Why: both packages ship a generated copy of the durable-task
 * protobuf messages, and google-protobuf's generated code registers every message class on one
 * process-wide `proto` namespace that the methods look up at call time; whichever copy loads last
 * serves both. Dapr's copy must serve while this adapter runs, or the worker's replies to the
 * sidecar fail to serialise (e.g. "message.getTagsMap is not a function"), so it has to load
 * last. Requiring durabletask-js's copy here first makes that hold whatever is loaded later, and
 * loading lazily keeps Dapr's copy out of processes that run the embedded engine instead (the
 * embedded engine needs its own copy to serve). CommonJS is read through require(), as the
 * embedded engine does, for the same ESM interop reasons.
 */
export function loadDaprWorkflowSdk(): DaprWorkflowSdk {
  if (loaded !== undefined) return loaded;
  const require = createRequire(import.meta.url);
  require("@microsoft/durabletask-js/dist/proto/orchestrator_service_pb.js");
  const sdk: DaprWorkflowSdk = {
    WorkflowRuntime: (
      require("@dapr/dapr/workflow/runtime/WorkflowRuntime.js") as { default: WorkflowRuntimeClass }
    ).default,
    DaprWorkflowClient: (
      require("@dapr/dapr/workflow/client/DaprWorkflowClient.js") as { default: DaprWorkflowClientClass }
    ).default,
    WorkflowRuntimeStatus: (
      require("@dapr/dapr/workflow/runtime/WorkflowRuntimeStatus.js") as typeof WorkflowRuntimeStatusModule
    ).WorkflowRuntimeStatus,
    repeatedSuspendsGuarded: false,
  };
  const pb =
    require("@dapr/dapr/workflow/internal/durabletask/proto/orchestrator_service_pb.js") as typeof DaprPbModule;
  assertDaprProtobufServes(
    pb,
    require("@dapr/dapr/workflow/internal/durabletask/utils/pb-helper.util.js") as typeof DaprPbHelperModule,
  );
  const executorModule =
    require("@dapr/dapr/workflow/internal/durabletask/worker/orchestration-executor.js") as {
      OrchestrationExecutor?: unknown;
    };
  sdk.repeatedSuspendsGuarded = guardAgainstRepeatedSuspends(
    executorModule.OrchestrationExecutor,
    pb.HistoryEvent.EventtypeCase,
  );
  loaded = sdk;
  return sdk;
}

/**
 * Round-trips the message the worker sends most (a workflow's reply with a completion action), so
 * a clash with another copy of the protobuf module fails here, by name, instead of inside the
 * worker, where Dapr only logs it to the console and the workflow never advances.
 */
function assertDaprProtobufServes(pb: typeof DaprPbModule, pbh: typeof DaprPbHelperModule): void {
  try {
    const reply = new pb.OrchestratorResponse();
    reply.setInstanceid("protobuf-probe");
    reply.setActionsList([
      pbh.newCompleteOrchestrationAction(1, pb.OrchestrationStatus.ORCHESTRATION_STATUS_COMPLETED),
    ]);
    const decoded = pb.OrchestratorResponse.deserializeBinary(reply.serializeBinary());
    if (decoded.getInstanceid() !== "protobuf-probe" || decoded.getActionsList().length !== 1) {
      throw new Error("the message did not survive a round trip");
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      "Dapr's workflow protobuf messages are shadowed by another copy of the durable-task protobuf " +
        `module loaded after them, so the workflow worker could not answer the sidecar (${reason}). ` +
        "Create the Dapr workflow engine before anything that loads another durabletask package.",
    );
  }
}
