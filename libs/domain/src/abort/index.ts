export * from "./deadline.ts";
