import { topics, type WorkerResultMessage } from "@matoolkit/domain";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deliverEvent,
  deliverResult,
  eventually,
  membersWith,
  phaseDueBody,
  runbookYaml,
  seedBatch,
  startHarness,
  type Harness,
} from "../test/test-harness.ts";
import { batchStatus, phaseStatuses, stepsOf, transitionsOf } from "../test/test-queries.ts";

/**
 * 000 D3 / issue 31: several orchestrators on one database. Two orchestrator processes (each its
 * own embedded runtime: pool, pg-boss consumers, outbox relay) take the same subscriptions, so
 * each message goes to one or the other; on top of that the test hands every worker result and
 * every phase-due to BOTH at once, as a redelivery landing on the other instance would. One of
 * them hosts the batch workflows (embedded mode's in-process engine: one host per database, see
 * compose.ts), which send the phases as they fall due. The guarantee: no transition recorded
 * twice, no step lost, no job sent twice.
 */
let h: Harness;
const copies: Promise<void>[] = [];

beforeAll(async () => {
  h = await startHarness({ orchestrators: 2, workflowHost: true });
  // A second subscription on worker-results: a copy of every result, handed to both orchestrators
  // while the bus delivers the original to one of them.
  await h.bus.declareSubscription({ topic: topics.workerResults, name: "test-copies" });
  await h.bus.subscribe({ topic: topics.workerResults, name: "test-copies", concurrency: 16 }, (delivery) => {
    const result = delivery.body as WorkerResultMessage;
    const handled = Promise.all(h.orchestrators.map((ctx) => deliverResult(ctx, result))).then(
      () => undefined,
    );
    copies.push(handled);
    return handled;
  });
});

afterAll(async () => {
  await h?.stop();
});

const MEMBERS = 6;

const yaml = runbookYaml(`
phases:
  - name: prepare
    offset: T-0
    steps:
      - name: pre-check
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
      - name: move-mailbox
        worker_id: worker-01
        function: Test-Poll
        params:
          PendingTimes: 2
        poll:
          interval: 1s
          timeout: 1m
      - name: notify
        worker_id: worker-01
        function: Test-Echo
  - name: cutover
    offset: T-0
    steps:
      - name: switch
        worker_id: worker-01
        function: Test-Echo
      - name: verify
        worker_id: worker-01
        function: Test-Echo
`);

/** The phase-due the workflow sends, handed to each orchestrator as well, all at the same moment. */
async function phaseDue(batch: Awaited<ReturnType<typeof seedBatch>>, index: number): Promise<void> {
  const body = phaseDueBody(batch, index);
  const id = `phase-due:${batch.phases[index]!.id}`;
  await Promise.all(
    h.orchestrators.map((ctx, n) => deliverEvent(ctx, "phase-due", body, `${id}:orchestrator-${n}`)),
  );
}

describe("two orchestrators on one database", () => {
  it("run a batch with no transition recorded twice, no step lost and no job sent twice", async () => {
    expect(h.orchestrators).toHaveLength(2);
    // An automated batch that started a minute ago: both phases are due, the workflow sends them.
    const batch = await seedBatch(h.db, yaml, membersWith(MEMBERS), {
      startsAt: new Date(Date.now() - 60_000),
    });
    await Promise.all(batch.phases.map((_, index) => phaseDue(batch, index)));
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "the batch to complete",
    );
    await Promise.all(copies);

    // No step lost: every member ran every step of both phases, each to success.
    const steps = await stepsOf(h.db, batch.batchId);
    expect(steps).toHaveLength(MEMBERS * 5);
    expect(steps.every((step) => step.status === "succeeded")).toBe(true);
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed", "completed"]);

    // No transition twice: one events row per entity and change (annotations, from = to, aside).
    const duplicated = await sql<{ entity: string; entityId: number; change: string; times: number }>`
      SELECT entity, entity_id AS "entityId", from_status || '→' || to_status AS change, count(*)::int AS times
      FROM events WHERE batch_id = ${batch.batchId} AND from_status IS DISTINCT FROM to_status
      GROUP BY entity, entity_id, from_status, to_status HAVING count(*) > 1
    `.execute(h.db);
    expect(duplicated.rows).toEqual([]);
    for (const step of steps) {
      expect(await transitionsOf(h.db, "step", step.id)).toEqual(
        step.isPollStep
          ? ["pending→dispatched", "dispatched→polling", "polling→succeeded"]
          : ["pending→dispatched", "dispatched→succeeded"],
      );
    }

    // No job twice: each job id reached the worker once (a poll step: its job and two polls).
    const jobIds = h.calls
      .filter((call) => !call.isInitStep && steps.some((step) => step.id === call.stepExecutionId))
      .map((call) => call.jobId);
    expect(jobIds).toHaveLength(MEMBERS * 4 + MEMBERS * 3);
    expect(new Set(jobIds).size).toBe(jobIds.length);
    // Both orchestrators were handed every result (the copies), beside the bus's own delivery.
    expect(copies.length).toBeGreaterThanOrEqual(jobIds.length);
  });
});
