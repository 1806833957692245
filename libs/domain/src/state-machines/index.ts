export * from "./define-machine.ts";
export * from "./machines.ts";
export * from "./mermaid.ts";
export * from "./outcome.ts";
