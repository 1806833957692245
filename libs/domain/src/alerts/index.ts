export * from "./definitions.ts";
