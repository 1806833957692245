import {
  countStagedRowsByBatch,
  getActiveRunbook,
  getAutomationSettings,
  listUnassignedGroups,
  type Db,
} from "@matoolkit/db";
import { parseRunbookOrThrow } from "@matoolkit/domain";
import type { DataSourceClient } from "@matoolkit/datasources";
import { toSourceRows } from "./source-rows.ts";
import { stageRows } from "./stage-rows.ts";

export interface PreviewBatch {
  /** ISO 8601 start time of the batch. */
  readonly batchStartTime: string;
  readonly memberCount: number;
  /** The existing automated batch these rows belong to; null for a batch a tick would create. */
  readonly batchId: number | null;
  readonly batchStatus: string | null;
}

export interface QueryPreview {
  readonly runbookName: string;
  readonly runbookVersion: number;
  readonly automationEnabled: boolean;
  readonly limit: number;
  /** The first `limit` rows as members' data_json would hold them. */
  readonly rows: readonly Record<string, unknown>[];
  readonly batches: readonly PreviewBatch[];
  /** Immediate mode: rows left out because the key is active in a manual batch of the runbook. */
  readonly rowsInManualBatches: number;
}

/** Marks the end of a preview's transaction; thrown to roll everything back. */
class PreviewDone extends Error {
  constructor(readonly preview: QueryPreview) {
    super("preview done");
  }
}

/**
 * 000 `POST /api/runbooks/{name}/query/preview`: runs the data source query with a limit and
 * groups the rows exactly as a tick would (same staging and assignment SQL), then rolls the
 * transaction back: nothing is written. Undefined when the runbook has no active version.
 */
export async function previewRunbookQuery(
  deps: { readonly db: Db; readonly dataSources: DataSourceClient },
  runbookName: string,
  options: { readonly limit: number; readonly now: Date },
): Promise<QueryPreview | undefined> {
  const row = await getActiveRunbook(deps.db, runbookName);
  if (row === undefined) return undefined;
  const definition = parseRunbookOrThrow(row.yamlContent);
  const raw = (await deps.dataSources.query(definition.dataSource, { limit: options.limit })).slice(
    0,
    options.limit,
  );
  // Validated up front (the same checks staging makes): a bad row is reported before any SQL.
  const rows = toSourceRows(raw, definition.dataSource);
  const automationEnabled = (await getAutomationSettings(deps.db, row.name))?.automationEnabled === true;
  try {
    await deps.db.transaction().execute(async (trx) => {
      const { rowsInManualBatches } = await stageRows(trx, row.name, definition.dataSource, raw, options.now);
      const existing = await countStagedRowsByBatch(trx);
      const batchRows =
        existing.size === 0
          ? []
          : await trx
              .selectFrom("batches")
              .select(["id", "status", "batchStartTime"])
              .where("id", "in", [...existing.keys()])
              .execute();
      const batches: PreviewBatch[] = [
        ...batchRows.map((batch) => ({
          batchStartTime: batch.batchStartTime?.toISOString() ?? "",
          memberCount: existing.get(batch.id) ?? 0,
          batchId: batch.id,
          batchStatus: batch.status,
        })),
        ...(await listUnassignedGroups(trx)).map((group) => ({
          batchStartTime: group.batchStart.toISOString(),
          memberCount: group.memberCount,
          batchId: null,
          batchStatus: null,
        })),
      ].sort((a, b) => a.batchStartTime.localeCompare(b.batchStartTime));
      throw new PreviewDone({
        runbookName: row.name,
        runbookVersion: row.version,
        automationEnabled,
        limit: options.limit,
        rows: rows.map((source) => source.data),
        batches,
        rowsInManualBatches,
      });
    });
  } catch (error) {
    if (error instanceof PreviewDone) return error.preview;
    throw error;
  }
  throw new Error("preview transaction ended without a result");
}
