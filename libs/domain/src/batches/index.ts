export * from "./external-ref.ts";
