export * from "./key-vault-key-source.ts";
export * from "./key-vault-versions.ts";
export * from "./refresh-keyring.ts";
export * from "./seal-webhook-secrets.ts";
export * from "./secret-key-source.ts";
export * from "./secret-keyring.ts";
export * from "./secrets-config.ts";
export * from "./secrets-at-start.ts";
