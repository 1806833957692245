export * from "./idempotency-store.ts";
export * from "./message-bus.ts";
export * from "./timers.ts";
export * from "./workflow-engine.ts";
