import type { MachineDefinition } from "./define-machine.ts";

/**
 * Renders a machine table as a Mermaid `stateDiagram-v2`, so ARCHITECTURE.md shows exactly what
 * the code enforces. Output is deterministic (states in table order, then events in table order)
 * so the committed diagrams can be checked for staleness with a plain string comparison.
 */
export function renderMermaid<S extends string, E extends string>(machine: MachineDefinition<S, E>): string {
  const lines = ["stateDiagram-v2", `    [*] --> ${machine.initial}`];
  const events = Object.keys(machine.transitions) as E[];
  for (const state of machine.states) {
    for (const event of events) {
      const transition = machine.transitions[event];
      if (transition.from.includes(state)) lines.push(`    ${state} --> ${transition.to}: ${event}`);
    }
  }
  for (const state of machine.terminal) lines.push(`    ${state} --> [*]`);
  return lines.join("\n");
}
