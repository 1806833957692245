export * from "./orchestrator-service.ts";
export { checkBatchCompletion, checkPhaseCompletion } from "./completion.ts";
