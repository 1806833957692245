export * from "./dispatch-init.ts";
export * from "./dispatch-phase.ts";
export * from "./notify-batch-changed.ts";
export * from "./messages.ts";
