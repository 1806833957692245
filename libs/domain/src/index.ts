export * from "./abort/index.ts";
export * from "./errors/index.ts";
export * from "./member-data/index.ts";
export * from "./messages/index.ts";
export * from "./notifications/index.ts";
export * from "./runbook/index.ts";
export * from "./state-machines/index.ts";
export * from "./templates/index.ts";
