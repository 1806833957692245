import { automatedLifecycleScenarios } from "./automated-lifecycle.scenarios.ts";
import { batchWorkflowScenarios } from "./batch-workflow.scenarios.ts";
import { manualBatchScenarios } from "./manual-batch.scenarios.ts";
import { standardLibraryScenarios } from "./standard-library.scenarios.ts";
import { daprProfile } from "./runtime-profiles.ts";

/**
 * The shared end-to-end scenarios as on Azure Container Apps (MATOOLKIT_RUNTIME=aca): Dapr
 * pub/sub and state through the stand-in sidecar, timers as Service Bus delayed messages
 * (ScheduledEnqueueTimeUtc, which the stand-in honours as Service Bus does), and the in-process
 * workflow engine resuming from SQL, because ACA's managed Dapr may lack Jobs and Workflow.
 */
const profile = daprProfile("aca", { MATOOLKIT_RUNTIME: "aca" });

manualBatchScenarios(profile);
batchWorkflowScenarios(profile);
automatedLifecycleScenarios(profile);
standardLibraryScenarios(profile);
