/**
 * `npm run diagrams` rewrites the state machine section of ARCHITECTURE.md from the tables in
 * libs/domain; `npm run diagrams -- --check` (CI) exits 1 when the committed section is stale.
 */
import { allMachines } from "@matoolkit/domain";
import { architecturePath, staleMessage, syncStateDiagrams } from "./state-diagrams.ts";

const check = process.argv.slice(2).includes("--check");
const outcome = await syncStateDiagrams(architecturePath, allMachines, { check });

switch (outcome) {
  case "up-to-date":
    console.log("ARCHITECTURE.md state diagrams are up to date");
    break;
  case "updated":
    console.log("ARCHITECTURE.md state diagrams updated");
    break;
  case "stale":
    console.error(staleMessage);
    process.exitCode = 1;
    break;
  default: {
    const unexpected: never = outcome;
    throw new Error(`Unexpected outcome ${String(unexpected)}`);
  }
}
