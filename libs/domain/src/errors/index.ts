export * from "./matoolkit-error.ts";
export * from "./reason-codes.ts";
export * from "./safe-error.ts";
export * from "./sanitize.ts";
export * from "./invalid-message-error.ts";
