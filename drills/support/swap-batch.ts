import { setTimeout as sleep } from "node:timers/promises";
import type { DrillApi, DrillWork } from "./dapr-batch.ts";

/**
 * The batch of the broker swap drill: the same runbook and members on every broker, with every
 * path a message takes in a real batch. Per member, in one phase:
 * - `check`: Test-Echo, or Test-Fail for every tenth member (no retry: the member fails and its
 *   later steps are cancelled, as a failed pre-check does);
 * - `record-1..3`: Drill-Record (support/dapr-batch.ts), whose side-effect log tells a step run
 *   twice or never;
 * - `flaky`: Test-Flaky failing its first call, so its retry goes out as a delayed job (the Jobs
 *   API on Dapr) and comes back through the broker;
 * - `poll`: Test-Poll answering "not complete" once, so it is polled again after 1 s.
 */
export const SWAP_RECORD_STEPS = 3;

export function swapRunbook(name: string, stepSeconds: number): string {
  const record = (index: number) => `      - name: record-${index}
        worker_id: worker-01
        function: Drill-Record
        params:
          Seconds: "${stepSeconds}"
          Member: "{{Upn}}"`;
  return `name: ${name}
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time: immediate
retry:
  max_retries: 3
  interval: 1s
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: check
        worker_id: worker-01
        function: "Test-{{Check}}"
        params:
          Message: "source mailbox is on litigation hold"
        retry:
          max_retries: 0
${Array.from({ length: SWAP_RECORD_STEPS }, (_, i) => record(i + 1)).join("\n")}
      - name: flaky
        worker_id: worker-01
        function: Test-Flaky
        params:
          FailTimes: "1"
      - name: poll
        worker_id: worker-01
        function: Test-Poll
        params:
          PendingTimes: "1"
        poll:
          interval: 1s
          timeout: 5m
`;
}

/** The members: the same upns on every broker; every tenth fails its check. */
export function swapMembersCsv(members: number): string {
  const rows = Array.from(
    { length: members },
    (_, i) => `swap${i}@contoso.test,${i % 10 === 9 ? "Fail" : "Echo"}`,
  );
  return `Upn,Check\n${rows.join("\n")}\n`;
}

export const expectedFailedMembers = (members: number): number => Math.floor(members / 10);

/** Creates the batch and advances it until its phase is dispatched; the time of that advance. */
export async function startSwapBatch(
  api: DrillApi,
  runbook: string,
  members: number,
): Promise<{ batchId: number; dispatchedAt: number }> {
  const created = await api("POST", `/batches?runbook=${runbook}`, swapMembersCsv(members), "text/csv");
  const batchId = Number(created.id);
  for (let advance = 0; advance < 40; advance++) {
    if ((await api("POST", `/batches/${batchId}/advance`)).action === "phase")
      return { batchId, dispatchedAt: Date.now() };
    await sleep(500);
  }
  throw new Error(`batch ${batchId}: its phase was not dispatched`);
}

/** What a batch ended with, comparable across brokers, and its lost/duplicated counts. */
export interface SwapOutcome {
  readonly batchStatus: string;
  /** `step status [reason code]` → how many, e.g. `check failed [worker.function_failed]` → 15. */
  readonly steps: Readonly<Record<string, number>>;
  /** Member status → how many. */
  readonly members: Readonly<Record<string, number>>;
  /** Steps that should have succeeded (members that passed their check) and did not, or left no effect. */
  readonly lost: number;
  /** Jobs whose Drill-Record ran twice. */
  readonly duplicated: number;
  /** Steps still pending, dispatched, polling or in retry. */
  readonly open: number;
  readonly stepCount: number;
}

interface StepRow {
  readonly id: number;
  readonly stepName: string;
  readonly status: string;
  readonly errorCode: string | null;
  readonly batchMemberId: number;
}

export async function swapOutcome(
  api: DrillApi,
  batchId: number,
  members: number,
  work: DrillWork,
): Promise<SwapOutcome> {
  const batch = await api("GET", `/batches/${batchId}`);
  const steps = ((await api("GET", `/batches/${batchId}/steps?limit=5000`)).steps ?? []) as StepRow[];
  // Without a limit the route answers every member, as an array.
  const memberRows = (await api("GET", `/batches/${batchId}/members`)) as unknown as Array<{
    status: string;
  }>;
  const count = (keys: string[]) =>
    Object.fromEntries(
      [...new Set(keys)].sort().map((key) => [key, keys.filter((other) => other === key).length]),
    );
  const failedChecks = new Set(
    steps.filter((step) => step.stepName === "check" && step.status === "failed").map((s) => s.batchMemberId),
  );
  const shouldSucceed = steps.filter(
    (step) => !failedChecks.has(step.batchMemberId) || step.stepName === "check",
  );
  const effects = new Map<string, string[]>();
  for (const [step, jobId] of work.effects().map((line) => line.split(" ") as [string, string]))
    effects.set(step, [...(effects.get(step) ?? []), jobId]);
  const recordSteps = steps.filter((step) => step.stepName.startsWith("record-"));
  const noEffect = recordSteps.filter((s) => s.status === "succeeded" && !effects.has(`step-${s.id}`)).length;
  const open = steps.filter((step) => ["pending", "dispatched", "polling", "retry"].includes(step.status));
  const expectedSteps = members * (SWAP_RECORD_STEPS + 3);
  return {
    batchStatus: String(batch.status),
    steps: count(steps.map((s) => `${s.stepName} ${s.status}${s.errorCode ? ` [${s.errorCode}]` : ""}`)),
    members: count(memberRows.map((member) => member.status)),
    lost:
      shouldSucceed.filter((s) => s.stepName !== "check" && s.status !== "succeeded" && !open.includes(s))
        .length +
      noEffect +
      Math.max(0, expectedSteps - steps.length),
    duplicated: [...effects.values()].flat().filter((jobId, i, all) => all.indexOf(jobId) !== i).length,
    open: open.length,
    stepCount: steps.length,
  };
}
