export * from "./errors.ts";
export * from "./serialize.ts";
