// Adapter contract suites (vitest). Kept out of the package entry point, which production code
// imports: importing them pulls in vitest.
export * from "./idempotency-store.contract.ts";
export * from "./message-bus.contract.ts";
export { describeWorkflowEngineContract } from "./workflow-engine.contract.ts";
