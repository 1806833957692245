export * from "./database.ts";
export * from "./postgres-server.ts";
export * from "./postgres-login-recorder.ts";
export * from "./key-vault-secret-store.ts";
export * from "./key-vault-simulator.ts";
