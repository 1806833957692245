export * from "./database.ts";
export * from "./postgres-server.ts";
export * from "./postgres-login-recorder.ts";
