import {
  insertBatch,
  insertMembers,
  insertPhases,
  publishRunbook,
  transitionBatch,
  type BatchMember,
  type Db,
  type JsonObject,
  type PhaseExecution,
} from "@matoolkit/db";
import { phaseRowsFor } from "@matoolkit/commands";
import { parseRunbookOrThrow } from "@matoolkit/domain";

/** Runbooks, batches and members for scenario tests, written as the admin API would. */
export interface SeededBatch {
  readonly batchId: number;
  readonly runbookName: string;
  readonly runbookVersion: number;
  readonly members: BatchMember[];
  readonly phases: PhaseExecution[];
}

let runbookCounter = 0;

/**
 * Publishes `yaml` (its `name:` line replaced by a unique name) and creates a manual batch with
 * these members and one pending phase execution per phase (as phaseRowsFor makes them, approval
 * gates included); active at once when there is no init. `startsAt`: an automated batch starting
 * then, its phases due at their offsets.
 */
export async function seedBatch(
  db: Db,
  yaml: string,
  members: ReadonlyArray<{ key: string; data: JsonObject }>,
  options: { readonly startsAt?: Date } = {},
): Promise<SeededBatch> {
  runbookCounter += 1;
  const name = `scenario-${process.pid}-${runbookCounter}`;
  const yamlContent = yaml.replace(/^name: .*$/m, `name: ${name}`);
  const definition = parseRunbookOrThrow(yamlContent);
  const runbook = await publishRunbook(db, { name, yamlContent, overdueBehavior: "rerun", rerunInit: false });
  const batch = await insertBatch(db, {
    runbookId: runbook.id,
    batchStartTime: options.startsAt ?? new Date("2030-01-01T00:00:00Z"),
    isManual: options.startsAt === undefined,
    createdBy: null,
  });
  const inserted = await insertMembers(
    db,
    batch.id,
    members.map((member) => ({ memberKey: member.key, data: member.data })),
  );
  const phases = await insertPhases(
    db,
    batch.id,
    phaseRowsFor(definition, runbook.version, options.startsAt ?? null),
  );
  if (definition.init.length === 0)
    await transitionBatch(db, batch.id, "activate", { reason: "runbook has no init steps" });
  return {
    batchId: batch.id,
    runbookName: name,
    runbookVersion: runbook.version,
    members: inserted,
    phases: [...phases].sort((a, b) => a.sequence - b.sequence),
  };
}

/** The wire body of a phase-due for the batch's phase at `index`. */
export function phaseDueBody(batch: SeededBatch, index: number): Record<string, unknown> {
  const phase = batch.phases[index];
  if (phase === undefined) throw new Error(`batch ${batch.batchId} has no phase ${index}`);
  return {
    BatchId: batch.batchId,
    RunbookName: batch.runbookName,
    RunbookVersion: batch.runbookVersion,
    PhaseName: phase.phaseName,
    PhaseExecutionId: phase.id,
  };
}

/** A runbook around `body` (phases, init, rollbacks…): manual CSV members keyed by `Upn`. */
export function runbookYaml(body: string): string {
  return `name: scenario
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time: immediate
${body}`;
}

/** `count` members `m0@contoso.test`… with `Upn` and whatever `extra` adds per index. */
export function membersWith(
  count: number,
  extra: (index: number) => JsonObject = () => ({}),
): Array<{ key: string; data: JsonObject }> {
  return Array.from({ length: count }, (_, index) => {
    const key = `m${index}@contoso.test`;
    return { key, data: { Upn: key, ...extra(index) } };
  });
}
