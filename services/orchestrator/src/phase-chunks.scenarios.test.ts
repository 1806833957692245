import { pauseBatch, resumeBatch } from "@matoolkit/commands";
import { getPhase } from "@matoolkit/db";
import { createLogger } from "@matoolkit/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deliverEvent,
  eventually,
  membersWith,
  phaseDueBody,
  phaseDueFirstChunkOnly,
  runbookYaml,
  seedBatch,
  startHarness,
  type Harness,
  type SeededBatch,
} from "../test/test-harness.ts";
import { batchStatus, stepsOf, transitionsOf } from "../test/test-queries.ts";
import { createPhaseStartPump } from "./phase-start-pump.ts";

/**
 * phase-due creates and starts a phase's members in chunks (the harness uses 2 per transaction),
 * and here with a start window of 2 (issue 29): a chunk of members without steps starts only while
 * fewer than 2 of the phase's steps are out with the worker; the phase's results move it on, and
 * the reconcile pass moves on a phase whose nudges were lost. Every member gets its steps once,
 * the phase can complete only after the last chunk, and a duplicate phase-due changes nothing.
 */
const WINDOW = 2;
let h: Harness;

beforeAll(async () => {
  h = await startHarness({ phaseStartWindow: WINDOW });
});

afterAll(async () => {
  for (const gate of ["phase-chunks", "window-pause"]) h.open(gate);
  await h?.stop();
});

/** Every step skipped (its when: is false): no job, no result. */
const everyStepSkipped = runbookYaml(`  columns: [Run]
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: skipped
        worker_id: worker-01
        function: Test-Echo
        when: "{{Run}} == 'yes'"
`);

const heldThenEcho = (gate: string) =>
  runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: held
        worker_id: worker-01
        function: Hold
        params:
          Gate: ${gate}
      - name: after
        worker_id: worker-01
        function: Test-Echo
`);

/** The most steps of the batch seen `dispatched` at once, sampled until `stop()`. */
function sampleDispatched(batchId: number): { stop: () => Promise<number> } {
  let most = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const dispatched = (await stepsOf(h.db, batchId)).filter((step) => step.status === "dispatched");
      most = Math.max(most, dispatched.length);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return most;
    },
  };
}

describe("a phase started in chunks, within its window", () => {
  it("starts only a window's worth of members, the rest as results come, each step once, and ignores a second phase-due", async () => {
    const batch = await seedBatch(h.db, heldThenEcho("phase-chunks"), membersWith(5));
    const phaseId = batch.phases[0]!.id;
    const body = phaseDueBody(batch, 0);
    // Delivered on this process: the first chunk fills the window, so the call returns with the
    // other three members still without steps.
    await deliverEvent(h.orchestrator, "phase-due", body, `phase-due:${phaseId}`);
    await h.orchestrator.phaseStarts?.idle();
    const steps = await stepsOf(h.db, batch.batchId);
    expect(steps.map((step) => [step.memberKey, step.stepIndex, step.status])).toEqual([
      ["m0@contoso.test", 0, "dispatched"],
      ["m0@contoso.test", 1, "pending"],
      ["m1@contoso.test", 0, "dispatched"],
      ["m1@contoso.test", 1, "pending"],
    ]);
    expect((await getPhase(h.db, phaseId))?.stepsCreatedAt).toBeNull();

    await deliverEvent(h.orchestrator, "phase-due", body, `phase-due:${phaseId}:again`);
    await h.orchestrator.phaseStarts?.idle();
    const again = await stepsOf(h.db, batch.batchId);
    expect(again.map((step) => [step.id, step.status, step.jobId])).toEqual(
      steps.map((step) => [step.id, step.status, step.jobId]),
    );

    const sampler = sampleDispatched(batch.batchId);
    h.open("phase-chunks");
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "the batch to complete",
    );
    // A chunk starts only into the window's room: never more than the window out at once.
    expect(await sampler.stop()).toBeLessThanOrEqual(WINDOW);
    const all = await stepsOf(h.db, batch.batchId);
    expect(all).toHaveLength(10);
    for (const step of all) {
      expect(await transitionsOf(h.db, "step", step.id)).toEqual([
        "pending→dispatched",
        "dispatched→succeeded",
      ]);
    }
    expect((await getPhase(h.db, phaseId))?.stepsCreatedAt).toBeInstanceOf(Date);
    expect(await transitionsOf(h.db, "phase", phaseId)).toEqual([
      "pending→dispatched",
      "dispatched→completed",
    ]);
  });

  it("starts no new member while paused, though results make room; the resume goes on", async () => {
    const batch = await seedBatch(h.db, heldThenEcho("window-pause"), membersWith(5));
    const phaseId = batch.phases[0]!.id;
    await deliverEvent(h.orchestrator, "phase-due", phaseDueBody(batch, 0), `phase-due:${phaseId}`);
    await h.db
      .transaction()
      .execute((trx) => pauseBatch(trx, batch.batchId, { actor: "operator@contoso.test" }));
    h.open("window-pause");
    // The two held steps answer: recorded, and the window is empty, but nothing new starts.
    await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps.filter((step) => step.status === "succeeded").length === 2,
      "the two started members' first steps to succeed",
    );
    await h.orchestrator.phaseStarts?.idle();
    await h.orchestrator.phaseStarts?.nudgeStalled();
    await h.orchestrator.phaseStarts?.idle();
    expect(await stepsOf(h.db, batch.batchId)).toHaveLength(4);

    await h.db
      .transaction()
      .execute((trx) => resumeBatch(trx, batch.batchId, { actor: "operator@contoso.test" }));
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "the resumed batch to complete",
    );
    const all = await stepsOf(h.db, batch.batchId);
    expect(all).toHaveLength(10);
    expect(all.every((step) => step.status === "succeeded")).toBe(true);
  });

  it("goes on from the reconcile pass when the nudges that would have moved it were lost", async () => {
    // No job, no result: only the chunks' own follow-ups and the reconcile pass can move the start.
    const batch: SeededBatch = await seedBatch(
      h.db,
      everyStepSkipped,
      membersWith(5, () => ({ Run: "no" })),
    );
    const phaseId = batch.phases[0]!.id;
    // The first chunk commits; its follow-ups (the next chunk) are dropped, as by a crash.
    await phaseDueFirstChunkOnly(h.orchestrator, phaseDueBody(batch, 0));
    expect(await stepsOf(h.db, batch.batchId)).toHaveLength(2);
    expect((await getPhase(h.db, phaseId))?.stepsCreatedAt).toBeNull();

    await h.orchestrator.phaseStarts?.nudgeStalled();
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "the batch to complete after the reconcile pass",
    );
    const all = await stepsOf(h.db, batch.batchId);
    expect(all.map((step) => [step.memberKey, step.status])).toEqual(
      batch.members.map((member) => [member.memberKey, "skipped"]),
    );
    expect((await getPhase(h.db, phaseId))?.status).toBe("completed");
  });

  it("lists more stalled phases than one reconcile pass takes over the following passes", async () => {
    const stalled: number[] = [];
    for (let batchNo = 0; batchNo < 2; batchNo += 1) {
      const batch = await seedBatch(
        h.db,
        everyStepSkipped,
        membersWith(5, () => ({ Run: "no" })),
      );
      await phaseDueFirstChunkOnly(h.orchestrator, phaseDueBody(batch, 0));
      stalled.push(batch.phases[0]!.id);
    }
    const continued: number[] = [];
    const pump = createPhaseStartPump({
      db: h.db,
      logger: createLogger({ level: "silent", name: "pump-test" }),
      stalledPerPass: 1,
      continueStart: async (phaseExecutionId) => {
        continued.push(phaseExecutionId);
        return "waiting";
      },
    });
    for (let pass = 0; pass < 3; pass += 1) {
      await pump.nudgeStalled();
      await pump.idle();
    }
    // One per pass, each in its turn, then from the start again.
    expect(continued).toEqual([stalled[0], stalled[1], stalled[0]]);
  });
});
