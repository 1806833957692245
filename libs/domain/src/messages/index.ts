export * from "./orchestrator-events.ts";
export * from "./topics.ts";
export * from "./worker-messages.ts";
export * from "./envelopes.ts";
