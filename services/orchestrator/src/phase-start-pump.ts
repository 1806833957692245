import { listPhasesStillStarting, type Db } from "@matoolkit/db";
import type { Logger } from "@matoolkit/runtime";
import type { PhaseStartProgress } from "./handlers/phase-due.ts";

/**
 * Moves a phase's windowed start on as its steps finish (issue 29; see handlePhaseDue). Every
 * handler transaction nudges the phases it touched; a nudge runs the phase's next chunk if the
 * window has room (continuePhaseStart, which locks and re-reads the phase). Runs beside the
 * results, never in their way: a chunk takes a transaction of its own, which the result pipeline
 * does not wait for.
 *
 * One run per phase at a time; a nudge during a run asks for one more run after it, so the last
 * result of a full window is never missed. A phase whose start is `finished` is remembered, and
 * its later results cost nothing here. Nothing here is durable, and needs not be: a nudge lost in
 * a crash is made again by the next result of the phase, or by the reconcile pass
 * (`nudgeStalled`), which lists every phase still creating its steps.
 */
export interface PhaseStartPump {
  nudge(phaseExecutionId: number): void;
  /** Nudges every phase of an active batch that has not finished creating its steps. */
  nudgeStalled(): Promise<void>;
  /** Resolves once no run is in progress (service stop, tests). */
  idle(): Promise<void>;
}

/** Remembered phases whose start is finished; cleared past this size (a cache, not a record). */
const KNOWN_FINISHED_MAX = 10_000;
/** Phases listed per reconcile pass, by default; the next pass goes on after the last (then from the start). */
const STALLED_PER_PASS = 100;

export function createPhaseStartPump(deps: {
  readonly db: Db;
  readonly logger: Logger;
  /** The next chunk of the phase, if its window has room (continuePhaseStart in a handler transaction). */
  readonly continueStart: (phaseExecutionId: number) => Promise<PhaseStartProgress>;
  /** Phases nudged per reconcile pass (default 100). */
  readonly stalledPerPass?: number;
}): PhaseStartPump {
  const { db, logger, continueStart } = deps;
  const stalledPerPass = deps.stalledPerPass ?? STALLED_PER_PASS;
  const running = new Map<number, Promise<void>>();
  const again = new Set<number>();
  const finished = new Set<number>();
  /** Where the next reconcile pass goes on listing: still-starting phases may outnumber a pass. */
  let stalledAfter = 0;

  const runOnce = async (phaseExecutionId: number): Promise<void> => {
    if ((await continueStart(phaseExecutionId)) !== "finished") return;
    if (finished.size >= KNOWN_FINISHED_MAX) finished.clear();
    finished.add(phaseExecutionId);
  };

  const run = async (phaseExecutionId: number): Promise<void> => {
    do {
      again.delete(phaseExecutionId);
      try {
        await runOnce(phaseExecutionId);
      } catch (error) {
        // The next result or the reconcile pass nudges it again.
        logger.error(
          { phaseExecutionId, err: (error as Error).name },
          "phase start not continued; the next result or reconcile pass retries",
        );
        return;
      }
    } while (again.has(phaseExecutionId));
  };

  const nudge = (phaseExecutionId: number): void => {
    if (finished.has(phaseExecutionId)) return;
    if (running.has(phaseExecutionId)) {
      again.add(phaseExecutionId);
      return;
    }
    const promise = run(phaseExecutionId).finally(() => running.delete(phaseExecutionId));
    running.set(phaseExecutionId, promise);
  };

  return {
    nudge,
    nudgeStalled: async () => {
      let phases = await listPhasesStillStarting(db, { afterId: stalledAfter, limit: stalledPerPass });
      // Past the last one: this pass starts from the beginning again.
      if (phases.length === 0 && stalledAfter > 0) {
        phases = await listPhasesStillStarting(db, { afterId: 0, limit: stalledPerPass });
      }
      stalledAfter = phases.length < stalledPerPass ? 0 : phases.at(-1)!;
      for (const phaseExecutionId of phases) nudge(phaseExecutionId);
    },
    idle: async () => {
      while (running.size > 0) await Promise.all([...running.values()]);
    },
  };
}
