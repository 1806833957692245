import type { Logger, WorkflowEngine } from "@matoolkit/runtime";
import type { DaprConfig } from "./platform-config.ts";

/** The Dapr Workflow engine (gRPC to the sidecar); loaded only when chosen. */
export async function createWorkflowEngine(dapr: DaprConfig, logger: Logger): Promise<WorkflowEngine> {
  const { createDaprWorkflowEngine } = await import("@matoolkit/runtime");
  return createDaprWorkflowEngine({
    daprHost: dapr.grpcHost,
    daprGrpcPort: String(dapr.grpcPort),
    ...(dapr.apiToken === undefined ? {} : { apiToken: dapr.apiToken }),
    logger,
  });
}
