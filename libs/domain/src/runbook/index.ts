export * from "./effective-retry.ts";
export * from "./model.ts";
export * from "./parse-runbook.ts";
export { positionRunbookProblems } from "./position-problems.ts";
export type { Finding as RunbookFinding, RunbookProblem } from "./problems.ts";
export { RunbookValidationError } from "./problems.ts";
export * from "./time.ts";
export { MAX_NAME_LENGTH, runbookYamlSchema } from "./yaml-schema.ts";
export type { RunbookYaml } from "./yaml-schema.ts";
