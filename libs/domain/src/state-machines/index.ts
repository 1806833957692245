export * from "./define-machine.ts";
export * from "./machines.ts";
