import { embeddedProfile } from "../test/runtime-profiles.ts";
import { standardLibraryScenarios } from "../test/standard-library.scenarios.ts";

// The contoso-to-fabrikam rehearsal on a simulated tenant having a bad day (the `chaos` profile:
// flapping replicas, a write replica that lags new objects, Exchange concurrency refusals): the
// same members succeed and fail, with the same steps, as on the default profile
// (embedded.e2e.test.ts runs that one).
standardLibraryScenarios(embeddedProfile, "chaos");
