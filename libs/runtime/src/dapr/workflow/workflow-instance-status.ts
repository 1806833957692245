import type { WorkflowRuntimeStatus } from "@dapr/dapr/workflow/runtime/WorkflowRuntimeStatus.js";
import type { WorkflowInstanceStatus } from "../../ports/index.ts";

/** What the adapter reads of Dapr's WorkflowState (getWorkflowState answers undefined when unknown). */
export interface DaprWorkflowStateView {
  readonly runtimeStatus: WorkflowRuntimeStatus;
}

/**
 * Dapr's runtime status in the port's terms. `Status` is Dapr's enum object, passed in because the
 * SDK is loaded lazily (see dapr-workflow-sdk.ts), not imported.
 */
export function toWorkflowInstanceStatus(
  state: DaprWorkflowStateView | undefined,
  Status: typeof WorkflowRuntimeStatus,
): WorkflowInstanceStatus {
  if (state === undefined) return "not_found";
  const status = state.runtimeStatus;
  switch (status) {
    // PENDING: scheduled, not picked up yet (starting it again would only collide with it).
    // CONTINUED_AS_NEW: between two generations of a continue-as-new loop, the same instance.
    case Status.RUNNING:
    case Status.PENDING:
    case Status.CONTINUED_AS_NEW:
      return "running";
    case Status.SUSPENDED:
      return "suspended";
    case Status.COMPLETED:
      return "completed";
    case Status.FAILED:
      return "failed";
    case Status.TERMINATED:
      return "terminated";
    default: {
      const unknown: never = status;
      throw new Error(
        `Dapr reported workflow runtime status ${String(unknown)}, which this adapter does not know`,
      );
    }
  }
}
