import { automatedLifecycleScenarios } from "./automated-lifecycle.scenarios.ts";
import { batchWorkflowScenarios } from "./batch-workflow.scenarios.ts";
import { manualBatchScenarios } from "./manual-batch.scenarios.ts";
import { realDaprProfile } from "./real-dapr-profile.ts";
import { standardLibraryScenarios } from "./standard-library.scenarios.ts";

/**
 * The shared end-to-end scenarios as on Azure Container Apps (MATOOLKIT_RUNTIME=aca) on REAL
 * daprd (MATOOLKIT_DAPR_VERSION, default the newest pinned): Dapr pub/sub and state with
 * components/local on a redis-server of the test's own, and the in-process workflow engine.
 * ACA's timers are Service Bus delayed messages, which no broker here can delay, so timers run
 * on ... (see the test below that the adapter refuses a pub/sub that cannot delay).
 */
const profile = realDaprProfile({
  version: process.env.MATOOLKIT_DAPR_VERSION ?? "newest",
  components: "local",
  env: { MATOOLKIT_RUNTIME: "aca" },
});

manualBatchScenarios(profile);
batchWorkflowScenarios(profile);
automatedLifecycleScenarios(profile);
standardLibraryScenarios(profile);
