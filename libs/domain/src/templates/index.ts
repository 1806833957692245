export * from "./errors.ts";
export * from "./resolve.ts";
export { templateVariablesIn } from "./syntax.ts";
export * from "./variables.ts";
