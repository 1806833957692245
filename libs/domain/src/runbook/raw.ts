import type { PathSegment } from "./problems.ts";

/**
 * Helpers for the cross-field rules, which read the raw YAML value defensively: they run even when the
 * shape is wrong elsewhere (zod reports that), and simply skip whatever is not the expected type.
 */
export type RawMapping = Readonly<Record<string, unknown>>;

export function isMapping(value: unknown): value is RawMapping {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function asList(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

export type StepListKind = "init" | "phase" | "on_member_removed" | "rollback";

export interface RawStepList {
  kind: StepListKind;
  path: PathSegment[];
  steps: readonly unknown[];
}

/** Every list of steps in the runbook: init, each phase, on_member_removed and each rollback. */
export function stepListsOf(root: RawMapping): RawStepList[] {
  const lists: RawStepList[] = [];
  lists.push({ kind: "init", path: ["init"], steps: asList(root.init) });
  asList(root.phases).forEach((phase, index) => {
    if (isMapping(phase))
      lists.push({ kind: "phase", path: ["phases", index, "steps"], steps: asList(phase.steps) });
  });
  lists.push({
    kind: "on_member_removed",
    path: ["on_member_removed"],
    steps: asList(root.on_member_removed),
  });
  if (isMapping(root.rollbacks)) {
    for (const [name, steps] of Object.entries(root.rollbacks)) {
      lists.push({ kind: "rollback", path: ["rollbacks", name], steps: asList(steps) });
    }
  }
  return lists;
}
