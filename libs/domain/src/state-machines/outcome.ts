/**
 * How an ended phase or batch went for its members (issue 12, spec 003's `partially_succeeded`).
 * Kept beside the status, not as a status: `completed` still means "ran to its end with at least
 * one member through", so every rule written against the status machines holds, and the outcome
 * says whether that was everyone.
 */
export const outcomes = ["succeeded", "partially_succeeded", "failed"] as const;
export type Outcome = (typeof outcomes)[number];

/** `succeeded` when no member failed, `failed` when none succeeded, else `partially_succeeded`. */
export function outcomeOf(counts: { readonly succeeded: number; readonly failed: number }): Outcome {
  if (counts.succeeded === 0) return "failed";
  return counts.failed === 0 ? "succeeded" : "partially_succeeded";
}
