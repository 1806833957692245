import { DataSourceError, type DataSourceClient } from "@matoolkit/datasources";
import { getActiveRunbook, getRunbookVersion, type Db } from "@matoolkit/db";
import {
  createRunbookPlanner,
  parseRunbookOrThrow,
  type PlannedPhase,
  type PlannedStep,
  type RunbookDefinition,
} from "@matoolkit/domain";
import { roundToFiveMinutes, SourceRowError, toSourceRows } from "@matoolkit/commands";
import { readMembersCsv } from "../csv/parse-members-csv.ts";
import type { CsvUpload } from "../csv/csv-upload.ts";
import { loopSlicer, type TimeSlicer } from "../csv/time-slicer.ts";
import { ApiError, notFound } from "../http/api-error.ts";
import type { RowLimit } from "../http/request-limits.ts";

export type PlanInput = { readonly csv: CsvUpload } | { readonly source: true };

export interface RunbookPlan {
  readonly runbook: { readonly name: string; readonly version: number };
  readonly input: "csv" | "source";
  readonly memberCount: number;
  readonly checkedMemberCount: number;
  readonly unresolvedCount: number;
  readonly limit: number;
  readonly batches: PlannedBatch[];
}

interface PlannedBatch {
  readonly batchStartTime: Date | null;
  readonly init: PlannedStep[];
  readonly members: { readonly key: string; readonly phases: PlannedPhase[] }[];
}

interface PlanMember {
  readonly key: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly batchStartTime: Date | null;
}

/**
 * Issue 12's dry run: every member's steps as the orchestrator would prepare them (domain
 * runbook/plan.ts), grouped by the batch they would land in. Reads only: no transaction, no
 * outbox, nothing staged (unlike the query preview, which stages rows and rolls back). The
 * members come from a CSV (validated exactly as POST /api/batches validates it, a manual batch:
 * no start time, no due times) or from the runbook's data source (rows validated as the query
 * preview validates them; batch time from batch_time_column, or now rounded to 5 minutes for
 * immediate batching, as a tick would set it for a new batch).
 */
export async function planRunbook(
  deps: { readonly db: Db; readonly dataSources: DataSourceClient },
  request: {
    readonly name: string;
    readonly version: number | undefined;
    readonly input: PlanInput;
    readonly limit: number;
    /** At most this many CSV member rows (http/request-limits.ts). */
    readonly rowLimit: RowLimit;
    readonly now: Date;
  },
): Promise<RunbookPlan> {
  const { name, version } = request;
  const row =
    version === undefined
      ? await getActiveRunbook(deps.db, name)
      : await getRunbookVersion(deps.db, name, version);
  if (row === undefined) {
    throw notFound(
      version === undefined
        ? `no active runbook named '${name}'`
        : `runbook '${name}' has no version ${version}`,
    );
  }
  const definition = parseRunbookOrThrow(row.yamlContent);
  // Reading and planning share the process's slices: the loop gets a turn every ~10 ms of either,
  // whatever the number of plans running.
  const slicer = loopSlicer;
  const members =
    "csv" in request.input
      ? csvMembers(request.input.csv, definition, request.rowLimit, slicer)
      : await sourceMembers(deps.dataSources, definition, request.limit, request.now);
  const planner = createRunbookPlanner(definition);
  const batches = new Map<number | null, PlannedBatch>();
  let unresolvedCount = 0;
  // A step its when: skips resolves nothing, so it cannot fail with template.unresolved.
  const countUnresolved = (steps: readonly PlannedStep[]) => {
    unresolvedCount += steps.filter(
      (step) => step.unresolved.length > 0 && step.whenDecision !== "skipped",
    ).length;
  };
  let index = 0;
  // The CSV's members are planned as they are read (only the listed ones are kept); a CSV with
  // a problem throws at the end of the iteration, so no plan of a bad file is ever answered.
  for await (const member of members.rows) {
    const startKey = member.batchStartTime?.getTime() ?? null;
    let batch = batches.get(startKey);
    if (batch === undefined) {
      batch = {
        batchStartTime: member.batchStartTime,
        init: planner.init(member.batchStartTime),
        members: [],
      };
      countUnresolved(batch.init);
      batches.set(startKey, batch);
    }
    const phases = planner.member(member.data, member.batchStartTime);
    for (const phase of phases) countUnresolved(phase.steps);
    // Every member is checked; the first `limit` are listed (member data beyond the key is not).
    if (index < request.limit) batch.members.push({ key: member.key, phases });
    index += 1;
    await slicer.pause();
  }
  const checkedMemberCount = index;
  return {
    runbook: { name: row.name, version: row.version },
    input: "csv" in request.input ? "csv" : "source",
    memberCount: members.count?.() ?? checkedMemberCount,
    checkedMemberCount,
    unresolvedCount,
    limit: request.limit,
    batches: [...batches.values()].sort(
      (a, b) => (a.batchStartTime?.getTime() ?? 0) - (b.batchStartTime?.getTime() ?? 0),
    ),
  };
}

/** The members to plan, and (for a source) how many rows it had beyond the planned ones. */
interface PlanMembers {
  readonly rows: AsyncIterable<PlanMember> | Iterable<PlanMember>;
  /** Every row of the source; absent for a CSV, whose members are all planned. */
  readonly count?: () => number;
}

/** A manual batch's members: the whole CSV is validated (400 naming lines) and checked. */
function csvMembers(
  csv: CsvUpload,
  definition: RunbookDefinition,
  rowLimit: RowLimit,
  slicer: TimeSlicer,
): PlanMembers {
  async function* rows(): AsyncGenerator<PlanMember> {
    for await (const { memberKey, data } of readMembersCsv(csv, definition.dataSource, {
      rowLimit,
      slicer,
    })) {
      yield { key: memberKey, data, batchStartTime: null };
    }
  }
  return { rows: rows() };
}

/**
 * The source's rows, streamed: the first `limit` are validated as the query preview validates them
 * and planned; the rest are only counted, never held (a source may return a million rows).
 */
async function sourceMembers(
  dataSources: DataSourceClient,
  definition: RunbookDefinition,
  limit: number,
  now: Date,
): Promise<PlanMembers> {
  const source = definition.dataSource;
  const first: Record<string, unknown>[] = [];
  let memberCount = 0;
  try {
    for await (const row of dataSources.rows(source)) {
      if (memberCount < limit) first.push(row);
      memberCount += 1;
    }
    const immediateStart = source.batchTime === "immediate" ? roundToFiveMinutes(now) : null;
    const members = toSourceRows(first, source).map((row) => ({
      key: row.memberKey,
      data: row.data,
      batchStartTime: row.batchStart ?? immediateStart,
    }));
    return { rows: members, count: () => memberCount };
  } catch (error) {
    throw sourceError(error);
  }
}

/** As for the query preview: the source failing is a 502, a row the scheduler cannot use a 422. */
function sourceError(error: unknown): unknown {
  if (error instanceof DataSourceError) return new ApiError(502, "datasource.failed", error.message);
  if (error instanceof SourceRowError) return new ApiError(422, "member_data.invalid", error.message);
  return error;
}
