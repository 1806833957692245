import type { ExecutionEvent } from "@matoolkit/domain";
import { insertBatch } from "../src/batches.repository.ts";
import type { Batch } from "../src/batches.table.ts";
import type { Db } from "../src/connection.ts";
import { insertMembers } from "../src/members.repository.ts";
import type { BatchMember } from "../src/members.table.ts";
import { insertPhases } from "../src/phases.repository.ts";
import type { PhaseExecution } from "../src/phases.table.ts";
import { publishRunbook } from "../src/runbooks.repository.ts";
import type { Runbook } from "../src/runbooks.table.ts";
import { transitionStep } from "../src/steps.repository.ts";
import type { NewStepExecution } from "../src/steps.table.ts";

/** Test support (not exported): a runbook, a batch, members and one phase to hang steps on. */
export interface SeededBatch {
  readonly runbook: Runbook;
  readonly batch: Batch;
  readonly members: BatchMember[];
  readonly phase: PhaseExecution;
}

let counter = 0;

export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

export async function seedBatch(db: Db, memberCount = 2): Promise<SeededBatch> {
  const runbook = await publishRunbook(db, {
    name: uniqueName("runbook"),
    yamlContent: "name: test\n",
    overdueBehavior: "rerun",
    rerunInit: false,
  });
  const batch = await insertBatch(db, {
    runbookId: runbook.id,
    batchStartTime: new Date("2030-01-01T00:00:00Z"),
    isManual: false,
    createdBy: null,
  });
  const members = await insertMembers(
    db,
    batch.id,
    Array.from({ length: memberCount }, (_, index) => ({
      memberKey: `member-${index}`,
      data: { Index: index },
    })),
  );
  const [phase] = await insertPhases(db, batch.id, [
    { phaseName: "migrate", sequence: 0, offsetMinutes: 0, dueAt: null, runbookVersion: runbook.version },
  ]);
  if (phase === undefined) throw new Error("phase not created");
  return { runbook, batch, members, phase };
}

export function stepRow(
  seeded: SeededBatch,
  member: BatchMember,
  stepIndex: number,
  overrides: Partial<NewStepExecution> = {},
): NewStepExecution {
  return {
    batchId: seeded.batch.id,
    phaseExecutionId: seeded.phase.id,
    batchMemberId: member.id,
    stepName: `step-${stepIndex}`,
    stepIndex,
    workerId: "worker-01",
    functionName: "Set-Thing",
    paramsJson: { Identity: "{{Upn}}" },
    ...overrides,
  };
}

/** Moves a step through `events` in order (each a guarded transition), e.g. dispatch then succeed. */
export async function stepThrough(db: Db, stepId: number, events: readonly ExecutionEvent[]): Promise<void> {
  for (const event of events) {
    if ((await transitionStep(db, stepId, event)) === undefined)
      throw new Error(`step ${stepId}: ${event} not allowed`);
  }
}
