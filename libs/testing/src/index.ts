export * from "./database.ts";
export * from "./postgres-server.ts";
