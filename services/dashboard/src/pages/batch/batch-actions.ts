import { isFinal, type BatchAction, type BatchDetail } from "./batch-api.ts";

/** What the confirmation dialog says for each action, and when the action applies. */
export interface ActionSpec {
  readonly action: BatchAction;
  readonly label: string;
  readonly title: string;
  readonly explain: (batch: BatchDetail) => string;
  readonly danger: boolean;
}

export const actionSpecs: readonly ActionSpec[] = [
  {
    action: "advance",
    label: "Advance",
    title: "Advance the batch?",
    explain: (batch) =>
      batch.status === "detected"
        ? "Its init steps are sent now (or its first phase, when the runbook has no init)."
        : `Its next pending phase is dispatched now for every active member${
            batch.currentPhase === null ? "" : ` (current phase: ${batch.currentPhase})`
          }.`,
    danger: false,
  },
  {
    action: "pause",
    label: "Pause",
    title: "Pause the batch?",
    explain: () =>
      "No new job, phase, poll or retry is sent until it is resumed. Jobs already sent finish and their results are recorded.",
    danger: false,
  },
  {
    action: "resume",
    label: "Resume",
    title: "Resume the batch?",
    explain: () =>
      "What the pause held back is sent: phases that fell due, waiting steps, polls and retries.",
    danger: false,
  },
  {
    action: "redrive",
    label: "Redrive failed",
    title: "Redrive the failed members?",
    explain: (batch) =>
      `${batch.memberCounts.failed} failed member(s) run again from their point of failure, with new job ids. Steps that succeeded are not run again.`,
    danger: false,
  },
  {
    action: "cancel",
    label: "Cancel batch",
    title: "Cancel the batch?",
    explain: () =>
      "Its open phases and steps are cancelled. A cancelled batch cannot be resumed or redriven.",
    danger: true,
  },
];

/**
 * Whether an action applies to the batch as last read. Only a hint for the buttons: the API
 * decides (a 409 with its reason is shown when the batch changed meanwhile).
 */
export function actionApplies(action: BatchAction, batch: BatchDetail): boolean {
  switch (action) {
    case "advance":
      return batch.isManual && (batch.status === "detected" || batch.status === "active");
    case "pause":
      return batch.status === "active";
    case "resume":
      return batch.status === "paused";
    case "redrive":
      return batch.status !== "cancelled" && batch.memberCounts.failed > 0;
    case "cancel":
      return !isFinal(batch.status);
    default: {
      const never: never = action;
      return never;
    }
  }
}
