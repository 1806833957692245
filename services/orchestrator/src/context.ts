import type { Db } from "@matoolkit/db";
import type { Logger } from "@matoolkit/runtime";
import type { RunbookCache } from "./runbook-cache.ts";

export interface OrchestratorContext {
  readonly db: Db;
  readonly logger: Logger;
  readonly runbooks: RunbookCache;
  readonly now: () => Date;
  /** Nudges the batch's workflow (a phase or the batch just ended); absent in handler-only tests. */
  readonly batchChanged?: (batchId: number) => Promise<void>;
}

/**
 * Work that must run after the handler's transaction commits. Completion checks read other
 * members' steps; run inside the transaction they could miss a concurrent result that commits at
 * the same moment, and a phase would never complete. Run after commit, the last committer
 * always sees every terminal step (and the guarded transitions make a double check harmless).
 */
export interface FollowUps {
  readonly phaseIds: Set<number>;
  readonly batchIds: Set<number>;
}

export function emptyFollowUps(): FollowUps {
  return { phaseIds: new Set(), batchIds: new Set() };
}
