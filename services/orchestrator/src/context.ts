import type { Db, MemberPhase } from "@matoolkit/db";
import type { Logger, MessageBus } from "@matoolkit/runtime";
import type { PhaseStartPump } from "./phase-start-pump.ts";
import type { RunbookCache } from "./runbook-cache.ts";

/** What the orchestrator's service holds for its whole life. */
export interface OrchestratorContext {
  /** The pool: each handler gets its own transaction from it (see HandlerScope). */
  readonly db: Db;
  readonly logger: Logger;
  readonly runbooks: RunbookCache;
  readonly now: () => Date;
  /** Nudges the batch's workflow (a phase or the batch just ended); absent in handler-only tests. */
  readonly batchChanged?: (batchId: number) => Promise<void>;
  /** Members whose steps phase-due creates and starts per transaction (see handlePhaseDue). */
  readonly phaseStartChunk: number;
  /**
   * A phase's steps out with workers (`dispatched`) at or above which its next chunk of members
   * waits for results instead of starting (see handlePhaseDue).
   */
  readonly phaseStartWindow: number;
  /** The bus's publish inside a handler's transaction, when it offers one (outgoing.ts). */
  readonly publishInTransaction?: MessageBus["publishInTransaction"];
  /**
   * Moves windowed phase starts on after handlers that touched their phases (phase-start-pump.ts);
   * absent in handler-only tests, where a phase goes only as far as its window.
   */
  readonly phaseStarts?: PhaseStartPump;
}

/**
 * Work that must run after the handler's transaction commits. Completion checks read other
 * members' steps; run inside the transaction they could miss a concurrent result that commits at
 * the same moment, and a phase would never complete. Run after commit, the last committer
 * always sees every terminal step (and the guarded transitions make a double check harmless).
 */
export interface FollowUps {
  /** Phases to check for completion and to nudge (phase-start-pump.ts) after the commit. */
  readonly phaseIds: Set<number>;
  /**
   * Member steps this transaction moved to `succeeded`, and steps it dispatched, by phase: the
   * phases of these two alone are checked or nudged only when that can find something (see
   * follow-up-phases.ts); `phaseIds` holds every phase touched any other way.
   */
  readonly succeededByPhase: Map<number, number>;
  readonly dispatchedByPhase: Map<number, number>;
  readonly batchIds: Set<number>;
  /**
   * Members to start on their next step after the commit, one transaction per chunk (a phase's
   * members beyond the first chunk; see handlePhaseDue).
   */
  readonly memberStarts: MemberPhase[][];
  /** The next chunk of a phase's step creation, each in its own transaction (see handlePhaseDue). */
  readonly phaseChunks: { phaseExecutionId: number; afterMemberId: number }[];
}

export function emptyFollowUps(): FollowUps {
  return {
    phaseIds: new Set(),
    succeededByPhase: new Map(),
    dispatchedByPhase: new Map(),
    batchIds: new Set(),
    memberStarts: [],
    phaseChunks: [],
  };
}

/**
 * Everything a handler works with: its transaction, named as such (every read and write of the
 * handler goes through it), the service's tools, and the completion checks it asks for.
 */
export interface HandlerScope {
  readonly trx: Db;
  readonly logger: Logger;
  readonly runbooks: RunbookCache;
  readonly now: () => Date;
  readonly phaseStartChunk: number;
  readonly phaseStartWindow: number;
  readonly followUps: FollowUps;
  /** See OrchestratorContext: worker jobs go out through it, else through the outbox. */
  readonly publishInTransaction?: MessageBus["publishInTransaction"];
}
