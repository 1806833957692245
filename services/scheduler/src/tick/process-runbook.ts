import { getAutomationSettings, listInFlightAutomatedBatches, type Db, type Runbook } from "@matoolkit/db";
import { parseRunbookOrThrow } from "@matoolkit/domain";
import type { DataSourceClient } from "@matoolkit/datasources";
import type { BatchLifecycle } from "../batch-lifecycle.ts";
import { dispatchDuePhases } from "./dispatch-due-phases.ts";
import { openSourceStream } from "./source-stream.ts";
import { nothingSynced, syncBatches, type SyncResult } from "./sync-batches.ts";
import { transitionVersions } from "./transition-versions.ts";

export interface RunbookTickDeps {
  readonly db: Db;
  readonly dataSources: DataSourceClient;
  readonly lifecycle: BatchLifecycle;
}

/** What one tick did for one runbook (logged, returned to tests and the benchmark). */
export interface RunbookTickResult {
  readonly automationEnabled: boolean;
  /** False when automation is off and no automated batch is in flight: nothing to sync. */
  readonly sourceQueried: boolean;
  readonly sourceRows: number;
  readonly createdBatchIds: readonly number[];
  readonly groupsNotCreated: number;
  readonly membersAdded: number;
  readonly membersRemoved: number;
  readonly membersRefreshed: number;
  readonly transitionedBatchIds: readonly number[];
  readonly dispatchedPhaseIds: readonly number[];
}

/**
 * 000 "Timer Lifecycle" step 2 for one active runbook: query, sync members and batches, version
 * transitions, due phases. The source's rows stream into the sync transaction as they arrive,
 * so a result of any size is staged without being held whole. Automation off (or never switched on, the 000 default) stops only
 * new batches: in-flight ones are still synced, transitioned and progressed. A failure (YAML,
 * source, a bad row) stops the runbook's tick before the step it hits writes anything; a failing
 * source therefore also holds back that runbook's due phases until the next tick, so a member
 * who left the source is never migrated because the source was down.
 */
export async function processRunbook(
  deps: RunbookTickDeps,
  row: Runbook,
  now: Date,
): Promise<RunbookTickResult> {
  const definition = parseRunbookOrThrow(row.yamlContent);
  const runbook = { row, definition };
  const automationEnabled = (await getAutomationSettings(deps.db, row.name))?.automationEnabled === true;
  const inFlight = await listInFlightAutomatedBatches(deps.db, row.name);
  if (!automationEnabled && inFlight.length === 0) {
    return { ...nothingDone, automationEnabled, sourceQueried: false };
  }

  const source = await openSourceStream(deps.dataSources.rows(definition.dataSource));
  let sync: SyncResult;
  try {
    sync = await syncBatches(deps.db, runbook, source.rows, { automationEnabled, now });
  } finally {
    await source.close();
  }
  for (const batchId of sync.createdBatchIds) await deps.lifecycle.batchCreated(batchId);
  // After the sync (which may fail on a bad row) and before phase timing, so that rerun's
  // past-due phases go out in this tick. New batches already run the active version.
  const transitionedBatchIds = await transitionVersions(deps.db, deps.lifecycle, runbook, inFlight, now);
  const dispatchedPhaseIds = await dispatchDuePhases(deps.db, row.name, now);
  return { ...sync, automationEnabled, sourceQueried: true, transitionedBatchIds, dispatchedPhaseIds };
}

const nothingDone: Omit<RunbookTickResult, "automationEnabled" | "sourceQueried"> = {
  ...nothingSynced,
  transitionedBatchIds: [],
  dispatchedPhaseIds: [],
};
