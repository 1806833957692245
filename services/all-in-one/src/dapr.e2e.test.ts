import { startTaskHubSidecarStandIn } from "@matoolkit/runtime/testing";
import { automatedLifecycleScenarios } from "./automated-lifecycle.scenarios.ts";
import { batchWorkflowScenarios } from "./batch-workflow.scenarios.ts";
import { manualBatchScenarios } from "./manual-batch.scenarios.ts";
import { standardLibraryScenarios } from "./standard-library.scenarios.ts";
import { daprProfile } from "./runtime-profiles.ts";

/**
 * The shared end-to-end scenarios with every port on a Dapr adapter (MATOOLKIT_RUNTIME=dapr):
 * pub/sub, Jobs API timers and state-store idempotency through the stand-in sidecar's HTTP API,
 * and the batch workflow on Dapr Workflow through the durable-task gRPC stand-in.
 */
const profile = daprProfile("dapr", { MATOOLKIT_RUNTIME: "dapr" }, () => startTaskHubSidecarStandIn());

manualBatchScenarios(profile);
batchWorkflowScenarios(profile);
automatedLifecycleScenarios(profile);
standardLibraryScenarios(profile);
