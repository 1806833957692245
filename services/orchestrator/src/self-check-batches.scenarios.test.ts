import { pauseBatch } from "@matoolkit/commands";
import { routingProperties, topics, type WorkerResultMessage } from "@matoolkit/domain";
import { orchestratorEventsSubscription } from "@matoolkit/runtime";
import { afterAll, beforeAll, expect, it } from "vitest";
import { processWorkerResults } from "./orchestrator-service.ts";
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
import { memberStatuses, stepsOf, transitionsOf, type StepView } from "../test/test-queries.ts";
import { stepResult } from "../test/test-results.ts";

/**
 * On the embedded bus, retry and poll checks are taken in batches inside one transaction
 * (`takeSelfChecks`, consumeInTransaction with `only`) and handled set-based. What must hold
 * whatever batch a check lands in: each retry dispatched once, each polling step polled once per
 * interval and failed past its poll timeout, a paused batch's checks sending nothing, and a
 * malformed check failing alone (dead-lettered) while the checks taken with it still dispatch.
 * The worker never answers (Hold on a closed gate): the test scripts the results.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: call-graph
        worker_id: worker-01
        function: Hold
        params:
          Gate: never-opened-for-checks
        retry:
          max_retries: 1
          interval: 1s
`);

async function dispatchedBatch(members: number, yamlText = yaml) {
  const batch = await seedBatch(h.db, yamlText, membersWith(members));
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
  const steps = await eventually(
    () => stepsOf(h.db, batch.batchId),
    (rows) => rows.length === members && rows.every((step) => step.status === "dispatched"),
    "every member's step to be dispatched",
  );
  return { batch, steps };
}

function failureOf(
  step: StepView,
  batch: { runbookName: string; runbookVersion: number },
): WorkerResultMessage {
  return stepResult({ id: step.id }, batch, {
    Status: "Failure",
    Result: null,
    Error: { Message: "transient", Type: "worker.error", IsThrottled: false, Attempts: 1 },
  });
}

it("dispatches each retry once when many checks of several batches fall due together; a paused batch's checks send nothing; a malformed check fails alone", async () => {
  const running = await dispatchedBatch(12);
  const paused = await dispatchedBatch(6);
  // All failures in one transaction: their retry checks fall due within the same moment.
  await processWorkerResults(h.orchestrator, [
    ...running.steps.map((step) => failureOf(step, running.batch)),
    ...paused.steps.map((step) => failureOf(step, paused.batch)),
  ]);
  await h.db
    .transaction()
    .execute((trx) => pauseBatch(trx, paused.batch.batchId, { actor: "operator@contoso.test" }));
  // A retry check no handler can read, due with the others, so it lands in a batch with them.
  const [first] = await stepsOf(h.db, running.batch.batchId);
  await h.bus.publish({
    id: "retry-check:malformed",
    topic: topics.orchestratorEvents,
    properties: { [routingProperties.messageType]: "retry-check" },
    body: { StepExecutionId: "not-a-number" },
    deliverAt: first!.retryAfter!,
  });

  const retried = await eventually(
    () => stepsOf(h.db, running.batch.batchId),
    (rows) => rows.every((step) => step.status === "dispatched" && step.jobId === `step-${step.id}-retry-1`),
    "every retry of the running batch to be dispatched",
  );
  const deadLetters = await eventually(
    () => h.bus.deadLetters(orchestratorEventsSubscription),
    (letters) => letters.some((letter) => letter.id === "retry-check:malformed"),
    "the malformed check to be dead-lettered",
  );
  expect(deadLetters.find((letter) => letter.id === "retry-check:malformed")).toMatchObject({
    topic: topics.orchestratorEvents,
    error: expect.stringContaining("message.invalid"),
  });
  for (const step of retried) {
    expect(await transitionsOf(h.db, "step", step.id)).toEqual([
      "pending→dispatched",
      "dispatched→failed",
      "failed→pending",
      "pending→dispatched",
    ]);
  }
  // The paused batch's checks were taken with the others and did nothing: its steps wait for the resume.
  const held = await stepsOf(h.db, paused.batch.batchId);
  expect(held.map((step) => [step.status, step.retryCount, step.jobId])).toEqual(
    held.map(() => ["pending", 1, null]),
  );
});

const pollingYaml = (gate: string, poll: string) =>
  runbookYaml(`
phases:
  - name: cutover
    offset: T-0
    steps:
      - name: move-mailbox
        worker_id: worker-01
        function: Hold
        params:
          Gate: ${gate}
        poll:
${poll}
`);

function answerOf(
  step: StepView,
  batch: { runbookName: string; runbookVersion: number },
  complete: boolean,
): WorkerResultMessage {
  return stepResult(step, batch, { Result: { complete, data: {} } });
}

it("polls each step once per interval when many poll checks fall due together; a paused batch's steps are not polled; a timed-out poll fails its member", async () => {
  const interval = "          interval: 1s\n          timeout: 1m";
  const running = await dispatchedBatch(10, pollingYaml("never-opened-for-polls", interval));
  const paused = await dispatchedBatch(4, pollingYaml("never-opened-for-polls", interval));
  const timingOut = await dispatchedBatch(
    3,
    pollingYaml("never-opened-for-polls", "          interval: 1s\n          timeout: 1s"),
  );
  // Every first answer in one transaction, with a duplicate and a stale one among them.
  const stale = {
    ...answerOf(running.steps[0]!, running.batch, false),
    JobId: `step-${running.steps[0]!.id}-retry-9`,
  };
  await processWorkerResults(h.orchestrator, [
    ...running.steps.map((step) => answerOf(step, running.batch, false)),
    answerOf(running.steps[1]!, running.batch, false),
    stale,
    ...paused.steps.map((step) => answerOf(step, paused.batch, false)),
    ...timingOut.steps.map((step) => answerOf(step, timingOut.batch, false)),
  ]);
  for (const step of await stepsOf(h.db, running.batch.batchId)) {
    expect(step).toMatchObject({ status: "polling", pollCount: 0, jobId: `step-${step.id}` });
    expect(step.pollStartedAt).not.toBeNull();
  }
  await h.db
    .transaction()
    .execute((trx) => pauseBatch(trx, paused.batch.batchId, { actor: "operator@contoso.test" }));

  // One interval later each running step is polled once: its next job, one more poll.
  const polled = await eventually(
    () => stepsOf(h.db, running.batch.batchId),
    (rows) => rows.every((step) => step.pollCount === 1),
    "every running step to be polled once",
  );
  for (const step of polled) {
    expect(step).toMatchObject({ status: "polling", jobId: `step-${step.id}-poll-1` });
    expect(step.lastPolledAt!.getTime()).toBeGreaterThanOrEqual(step.pollStartedAt!.getTime() + 500);
  }
  // The second round of answers; then the steps complete.
  await processWorkerResults(
    h.orchestrator,
    polled.map((step) => answerOf(step, running.batch, false)),
  );
  const polledTwice = await eventually(
    () => stepsOf(h.db, running.batch.batchId),
    (rows) => rows.every((step) => step.pollCount === 2),
    "every running step to be polled twice",
  );
  await processWorkerResults(
    h.orchestrator,
    polledTwice.map((step) => answerOf(step, running.batch, true)),
  );
  for (const step of await stepsOf(h.db, running.batch.batchId)) {
    expect(step.status).toBe("succeeded");
    expect(await transitionsOf(h.db, "step", step.id)).toEqual([
      "pending→dispatched",
      "dispatched→polling",
      "polling→succeeded",
    ]);
    // Polled twice, no more: one poll per check, each after its interval.
    expect(step.pollCount).toBe(2);
  }
  for (const [before, after] of polled.map((step, index) => [step, polledTwice[index]!] as const)) {
    expect(after.lastPolledAt!.getTime()).toBeGreaterThanOrEqual(before.lastPolledAt!.getTime() + 500);
  }

  // The timed-out steps failed (poll.timeout, never retried), their members with them.
  const timedOut = await eventually(
    () => stepsOf(h.db, timingOut.batch.batchId),
    (rows) => rows.every((step) => step.status === "poll_timeout"),
    "every timing-out step to time out",
  );
  expect(timedOut.map((step) => step.errorCode)).toEqual(timedOut.map(() => "poll.timeout"));
  const members = await memberStatuses(h.db, timingOut.batch.batchId);
  expect(Object.values(members)).toEqual(timedOut.map(() => "failed"));
  // The paused batch's steps were not polled: the resume sends their checks again.
  const held = await stepsOf(h.db, paused.batch.batchId);
  expect(held.map((step) => [step.status, step.pollCount])).toEqual(held.map(() => ["polling", 0]));
});
