export * from "./azure-credential.ts";
export * from "./boot-platform.ts";
export * from "./database-token.ts";
export * from "./open-database.ts";
export * from "./platform-config.ts";
export * from "./run-until-signalled.ts";
export * from "./compose-services.ts";
export * from "./data-sources.ts";
