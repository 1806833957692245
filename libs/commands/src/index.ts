export * from "./dispatch-init.ts";
export * from "./dispatch-phase.ts";
export * from "./notify-batch-changed.ts";
export * from "./redrive-batch.ts";
export * from "./pause-batch.ts";
export * from "./resume-batch.ts";
export * from "./messages.ts";
export * from "./batch-source/index.ts";
