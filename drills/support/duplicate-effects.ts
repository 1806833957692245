import { setTimeout as sleep } from "node:timers/promises";
import type { FunctionModule } from "@matoolkit/worker";

/**
 * `Drill-Effect`: a function that is NOT safe to repeat (no declaration), as a mailbox move or
 * an email would be. It takes a moment (so two copies of a job overlap) and records its side
 * effect per job id and per (member, step): either counted twice is a duplicated effect.
 */
export interface EffectLedger {
  readonly byJob: Map<string, number>;
  readonly byStep: Map<string, number>;
  readonly module: FunctionModule;
}

export function effectLedger(): EffectLedger {
  const byJob = new Map<string, number>();
  const byStep = new Map<string, number>();
  const module: FunctionModule = {
    "Drill-Effect": async (params, context) => {
      await sleep(20 + Math.floor(Math.random() * 30));
      byJob.set(context.jobId, (byJob.get(context.jobId) ?? 0) + 1);
      const step = `${String(params.Member)} ${String(params.Step)}`;
      byStep.set(step, (byStep.get(step) ?? 0) + 1);
      return { recorded: true };
    },
  };
  return { byJob, byStep, module };
}

export function countAbove(counts: ReadonlyMap<string, number>, limit: number): number {
  return [...counts.values()].filter((count) => count > limit).length;
}
