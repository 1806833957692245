export * from "./poll-sweep.ts";
export * from "./scheduler-config.ts";
export * from "./scheduler-service.ts";
