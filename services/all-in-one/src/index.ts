export * from "./start-all.ts";
