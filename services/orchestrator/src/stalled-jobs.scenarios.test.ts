import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESEND_AFTER_SECONDS, resendStalledJobs } from "./stalled-jobs.ts";
import { timeOutStuckExecutions } from "./stuck-executions.ts";
import {
  eventually,
  membersWith,
  phaseDueBody,
  publishEvent,
  runbookYaml,
  seedBatch,
  startHarness,
  type Harness,
} from "../test/test-harness.ts";
import { findStep, secondsAfterDispatch, stepOf, stepsOf, type StepView } from "../test/test-queries.ts";

/** A job message lost between the orchestrator's commit and the worker: sent again, run once. */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.stop();
});

const after = secondsAfterDispatch;

describe("stalled jobs", () => {
  it("a job that never reached its worker is sent again after RESEND_AFTER_SECONDS and runs once", async () => {
    // worker-02's pool does not exist yet, so the bus drops its job: lost on the way.
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: echo
        worker_id: worker-02
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    const dispatched = (await eventually(
      async () => findStep(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0),
      (step) => step?.status === "dispatched",
      "the step to be dispatched",
    ))!;
    await h.startWorker("worker-02");

    // Not yet: a job may wait in a busy worker's queue that long.
    expect(await resendStalledJobs(h.orchestrator, after(dispatched, RESEND_AFTER_SECONDS - 1))).toBe(0);
    expect(await resendStalledJobs(h.orchestrator, after(dispatched, RESEND_AFTER_SECONDS + 1))).toBe(1);
    const done = await eventually(
      async () => stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0),
      (step) => step.status === "succeeded",
      "the re-sent job to run",
    );
    expect(done.jobId).toBe(dispatched.jobId);
    expect(h.calls.filter((call) => call.jobId === dispatched.jobId)).toHaveLength(1);
    // Answered: nothing more to send.
    expect(await resendStalledJobs(h.orchestrator, after(dispatched, 2 * RESEND_AFTER_SECONDS + 1))).toBe(0);
  });

  it("a copy of a job its worker is running does not run it again", async () => {
    const batch = await seedBatch(h.db, holdRunbook("resend-running", ""), membersWith(1));
    const running = await dispatchedAndRunning(batch);
    expect(await resendStalledJobs(h.orchestrator, after(running, RESEND_AFTER_SECONDS + 1))).toBe(1);
    // The copy went out under an id of its own (under the first id, a bus's duplicate detection,
    // Service Bus's, would drop it).
    expect(await jobMessageIds(running)).toEqual([`job:${running.jobId}`, `job:${running.jobId}:resend-1`]);
    // Once per interval: the same id again while the bus still drops it, nothing after that.
    expect(await resendStalledJobs(h.orchestrator, after(running, RESEND_AFTER_SECONDS + 599))).toBe(1);
    expect(await resendStalledJobs(h.orchestrator, after(running, RESEND_AFTER_SECONDS + 601))).toBe(0);
    expect(await jobMessageIds(running)).toHaveLength(2);
    expect(await resendStalledJobs(h.orchestrator, after(running, 2 * RESEND_AFTER_SECONDS + 1))).toBe(1);
    expect(await jobMessageIds(running)).toEqual([
      `job:${running.jobId}`,
      `job:${running.jobId}:resend-1`,
      `job:${running.jobId}:resend-2`,
    ]);
    h.open("resend-running");
    await eventually(
      async () => stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0),
      (step) => step.status === "succeeded",
      "the step to succeed",
    );
    expect(h.calls.filter((call) => call.jobId === running.jobId)).toHaveLength(1);
  });

  it("a step whose timeout comes first is left to the timeout", async () => {
    const batch = await seedBatch(h.db, holdRunbook("resend-short", "timeout: 10m"), membersWith(1));
    const running = await dispatchedAndRunning(batch);
    expect(running.timeoutSec).toBe(600);
    await resendStalledJobs(h.orchestrator, after(running, RESEND_AFTER_SECONDS + 1));
    expect(await jobMessageIds(running)).toEqual([`job:${running.jobId}`]);
    expect(await timeOutStuckExecutions(h.orchestrator, after(running, RESEND_AFTER_SECONDS + 1))).toBe(1);
    h.open("resend-short");
  });
});

/**
 * The ids the bus took for a step's job messages: the embedded bus's dedupe keys (a re-send's),
 * and the queued or running job rows (the dispatch's own message, published once by its
 * transaction, leaves no key; its job is running here, held by the test's gate).
 */
async function jobMessageIds(step: StepView): Promise<string[]> {
  const ids = (column: string) => sql`
    (${sql.raw(column)} = ${`job:${step.jobId}`} OR ${sql.raw(column)} LIKE ${`job:${step.jobId}:resend-%`})`;
  const rows = await sql<{ id: string }>`
    SELECT message_id AS id FROM matoolkit_bus.dedupe_keys WHERE topic = 'worker-jobs' AND ${ids("message_id")}
    UNION
    SELECT data->>'id' AS id FROM pgboss.job WHERE data->>'topic' = 'worker-jobs' AND ${ids("data->>'id'")}
    ORDER BY id
  `.execute(h.db);
  return rows.rows.map((row) => row.id);
}

function holdRunbook(gate: string, timeoutLine: string): string {
  return runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: wait
        worker_id: worker-01
        function: Hold
        params:
          Gate: ${gate}
        ${timeoutLine}
`);
}

async function dispatchedAndRunning(batch: Awaited<ReturnType<typeof seedBatch>>): Promise<StepView> {
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
  const step = await eventually(
    async () => findStep(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0),
    (found) => found?.status === "dispatched" && h.calls.some((call) => call.jobId === found.jobId),
    "the job to be running",
  );
  return step!;
}
