import { automatedLifecycleScenarios } from "./automated-lifecycle.scenarios.ts";
import { batchWorkflowScenarios } from "./batch-workflow.scenarios.ts";
import { manualBatchScenarios } from "./manual-batch.scenarios.ts";
import { standardLibraryScenarios } from "./standard-library.scenarios.ts";
import { embeddedProfile } from "./runtime-profiles.ts";

// The shared end-to-end scenarios on the embedded adapters (what `npm start` runs).
manualBatchScenarios(embeddedProfile);
batchWorkflowScenarios(embeddedProfile);
automatedLifecycleScenarios(embeddedProfile);
standardLibraryScenarios(embeddedProfile);
