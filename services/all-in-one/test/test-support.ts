import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { notifyBatchChanged } from "@matoolkit/commands";
import { insertBatch, insertMembers, insertPhases, publishRunbook, type Db } from "@matoolkit/db";
import { parseRunbookOrThrow } from "@matoolkit/domain";

/**
 * An automated batch as the scheduler creates it (detected, start time set, phases with due_at),
 * handed to the batch workflow with a nudge. For end-to-end tests that need exact control of the
 * batch without running a data source.
 */
export async function seedAutomatedBatch(
  db: Db,
  args: { name: string; yaml: string; startsAt: Date; memberKeys: readonly string[] },
): Promise<number> {
  const definition = parseRunbookOrThrow(args.yaml);
  const row = await publishRunbook(db, {
    name: args.name,
    yamlContent: args.yaml,
    overdueBehavior: "rerun",
    rerunInit: false,
  });
  return db.transaction().execute(async (trx) => {
    const batch = await insertBatch(trx, {
      runbookId: row.id,
      batchStartTime: args.startsAt,
      isManual: false,
      createdBy: null,
    });
    await insertMembers(
      trx,
      batch.id,
      args.memberKeys.map((key) => ({ memberKey: key, data: { Upn: key } })),
    );
    await insertPhases(
      trx,
      batch.id,
      definition.phases.map((phase, sequence) => ({
        phaseName: phase.name,
        sequence,
        offsetMinutes: phase.offsetMinutes,
        dueAt: new Date(args.startsAt.getTime() - phase.offsetMinutes * 60_000),
        runbookVersion: row.version,
      })),
    );
    await notifyBatchChanged(trx, batch.id, "created");
    return batch.id;
  });
}

export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
): Promise<T> {
  // Generous: the whole system runs in this process, beside other test files on a busy machine.
  const deadline = Date.now() + 90_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A batch's phase steps in runbook order (phase, member, step index): without the ORDER BY,
 * PostgreSQL returns them in whatever order updates left them, and assertions on order flake.
 */
export function batchStepsInRunbookOrder(db: Db, batchId: number) {
  return db
    .selectFrom("stepExecutions")
    .innerJoin("phaseExecutions", "phaseExecutions.id", "stepExecutions.phaseExecutionId")
    .select([
      "stepExecutions.batchMemberId",
      "phaseExecutions.phaseName",
      "stepExecutions.stepName",
      "stepExecutions.status",
      "stepExecutions.errorCode",
      "stepExecutions.errorMessage",
    ])
    .where("stepExecutions.batchId", "=", batchId)
    .orderBy("phaseExecutions.sequence")
    .orderBy("stepExecutions.batchMemberId")
    .orderBy("stepExecutions.stepIndex")
    .execute();
}

const repoRoot = resolve(import.meta.dirname, "../../..");

/** A file of the repository's `examples/` directory (runbooks, CSVs, the example tenant). */
export const examplePath = (name: string): string => join(repoRoot, "examples", name);

export const exampleText = (name: string): string => readFileSync(examplePath(name), "utf8");
