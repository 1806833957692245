import type { HandlerScope, OrchestratorContext } from "./context.ts";
import type { ExecutionRef } from "./executions.ts";
import { inHandlerTransaction } from "./handler-transaction.ts";

/** An execution found by a sweep, with the attempt (job id) it was found in. */
export interface SweepCandidate {
  readonly ref: ExecutionRef;
  /** A retry or a result since the scan makes this one moot: the sweep re-checks it under lock. */
  readonly jobId: string | null;
}

/**
 * The rows of a sweep (stuck executions, stalled jobs) as candidates: steps first, then inits.
 */
export function sweepCandidates(
  steps: ReadonlyArray<{ readonly id: number; readonly jobId: string | null }>,
  inits: ReadonlyArray<{ readonly id: number; readonly jobId: string | null }>,
): SweepCandidate[] {
  return [
    ...steps.map((row) => ({ ref: { kind: "step", id: row.id } as const, jobId: row.jobId })),
    ...inits.map((row) => ({ ref: { kind: "init", id: row.id } as const, jobId: row.jobId })),
  ];
}

/**
 * `work` for each candidate, each in its own handler transaction (its follow-ups run after its
 * commit). One that throws is logged with `failure` and left to the next pass: it must not hold
 * back the others. Returns how many `work` reported done.
 */
export async function sweepEach(
  ctx: OrchestratorContext,
  candidates: readonly SweepCandidate[],
  work: (scope: HandlerScope, candidate: SweepCandidate) => Promise<boolean>,
  failure: string,
): Promise<number> {
  let done = 0;
  for (const candidate of candidates) {
    try {
      if (await inHandlerTransaction(ctx, (scope) => work(scope, candidate))) done += 1;
    } catch (error) {
      ctx.logger.error(
        { kind: candidate.ref.kind, executionId: candidate.ref.id, err: (error as Error).name },
        failure,
      );
    }
  }
  return done;
}
