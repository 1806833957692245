import { automatedLifecycleScenarios } from "../test/automated-lifecycle.scenarios.ts";
import { batchWorkflowScenarios } from "../test/batch-workflow.scenarios.ts";
import { manualBatchScenarios } from "../test/manual-batch.scenarios.ts";
import { realDaprProfile } from "../test/real-dapr-profile.ts";
import { runbookLanguageScenarios } from "../test/runbook-language.scenarios.ts";
import { standardLibraryScenarios } from "../test/standard-library.scenarios.ts";

/**
 * The shared end-to-end scenarios on REAL daprd, placement and scheduler
 * (MATOOLKIT_DAPR_VERSION, default the newest pinned) with components/rabbitmq: the machine's
 * RabbitMQ (a vhost of the test's own) and PostgreSQL v2 state (a database of its own), the
 * Jobs API on the real Dapr Scheduler, the batch workflow on Dapr Workflow.
 */
const profile = realDaprProfile({
  version: process.env.MATOOLKIT_DAPR_VERSION ?? "newest",
  processEnv: process.env,
  components: "rabbitmq",
  env: { MATOOLKIT_RUNTIME: "dapr" },
});

manualBatchScenarios(profile);
batchWorkflowScenarios(profile);
automatedLifecycleScenarios(profile);
standardLibraryScenarios(profile);
runbookLanguageScenarios(profile);
