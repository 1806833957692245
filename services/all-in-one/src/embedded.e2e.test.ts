import { alertScenarios } from "../test/alerts.scenarios.ts";
import { automatedLifecycleScenarios } from "../test/automated-lifecycle.scenarios.ts";
import { batchWorkflowScenarios } from "../test/batch-workflow.scenarios.ts";
import { manualBatchScenarios } from "../test/manual-batch.scenarios.ts";
import { runbookLanguageScenarios } from "../test/runbook-language.scenarios.ts";
import { standardLibraryScenarios } from "../test/standard-library.scenarios.ts";
import { embeddedProfile } from "../test/runtime-profiles.ts";

// The shared end-to-end scenarios on the embedded adapters (what `npm start` runs).
manualBatchScenarios(embeddedProfile);
batchWorkflowScenarios(embeddedProfile);
automatedLifecycleScenarios(embeddedProfile);
standardLibraryScenarios(embeddedProfile);
runbookLanguageScenarios(embeddedProfile);
alertScenarios(embeddedProfile);
