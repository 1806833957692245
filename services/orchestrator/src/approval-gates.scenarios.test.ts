import {
  decidePhaseApproval,
  dispatchPhase,
  pauseBatch,
  redriveBatch,
  resumeBatch,
  type ApprovalDecision,
  type ApprovalOutcome,
  type PhaseDispatch,
} from "@matoolkit/commands";
import { cancelBatch, insertWebhook, listDeliveries, listEvents, listPhases, type Db } from "@matoolkit/db";
import { phaseApprovalPayloadSchema } from "@matoolkit/domain";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deliverEvent,
  eventually,
  membersWith,
  phaseDueBody,
  runbookYaml,
  seedBatch,
  startHarness,
  type Harness,
  type SeededBatch,
} from "../test/test-harness.ts";
import { batchStatus, phaseStatuses, stepsOf } from "../test/test-queries.ts";
import { progressBatch } from "./workflow/progress-batch.ts";

/**
 * Approval gates (issue 30) on the orchestrator assembled as in production: a gated phase that falls
 * due (automated, the batch workflow's activity) or is advanced (manual, libs/commands
 * dispatchPhase as the admin API runs it) waits in `awaiting_approval` with nothing sent; an
 * approval sends it as if it had just fallen due, a rejection fails it with `phase.rejected`; the
 * approval timeout decides alone, from PostgreSQL; pause, cancel, redrive and later phases keep
 * working around the gate.
 */
let h: Harness;
const OPERATOR = "approver@contoso.test";

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.stop();
});

/** pre-checks (ungated), cutover (gated as `gate` says), cleanup (ungated). */
function gatedRunbook(gate: string): string {
  const phase = (name: string, offset: string, extra = "") => `  - name: ${name}
    offset: ${offset}
${extra}    steps:
      - name: ${name}-step
        worker_id: worker-01
        function: Test-Echo
        params:
          Value: "{{Upn}}"
`;
  return runbookYaml(
    `phases:\n${phase("pre-checks", "T-2h")}${phase("cutover", "T-1h", gate)}${phase("cleanup", "T-0")}`,
  );
}

const GATED = "    approval: required\n";

/** A manual batch's phase as an operator's advance dispatches it (admin API: advance-batch.ts). */
function advance(batch: SeededBatch, sequence: number): Promise<PhaseDispatch> {
  return h.db.transaction().execute(async (trx) => {
    const [phase] = (await listPhases(trx, batch.batchId)).filter((p) => p.sequence === sequence);
    return dispatchPhase(trx, {
      batchId: batch.batchId,
      runbookName: batch.runbookName,
      phase: phase!,
      reason: "advanced by operator",
      actor: OPERATOR,
    });
  });
}

function decide(
  batch: SeededBatch,
  sequence: number,
  decision: ApprovalDecision,
  actor: string | undefined = OPERATOR,
): Promise<ApprovalOutcome> {
  return h.db.transaction().execute(async (trx) => {
    const [phase] = (await listPhases(trx, batch.batchId)).filter((p) => p.sequence === sequence);
    return decidePhaseApproval(trx, {
      batchId: batch.batchId,
      phaseId: phase!.id,
      decision,
      ...(actor === undefined ? {} : { actor }),
    });
  });
}

/** Worker calls for the batch's steps of `phase`: what was really sent. */
async function jobsSent(batch: SeededBatch, phase: string): Promise<number> {
  const ids = new Set(
    (await stepsOf(h.db, batch.batchId)).filter((step) => step.phaseName === phase).map((step) => step.id),
  );
  return h.calls.filter((call) => !call.isInitStep && ids.has(call.stepExecutionId)).length;
}

async function phaseEvents(db: Db, batch: SeededBatch, phaseName: string) {
  const phase = batch.phases.find((p) => p.phaseName === phaseName)!;
  return (await listEvents(db, batch.batchId, { limit: 1000 }))
    .filter((event) => event.entity === "phase" && event.entityId === phase.id)
    .map((event) => ({
      from: event.fromStatus,
      to: event.toStatus,
      reason: event.reason,
      actor: event.actor,
    }));
}

async function untilPhases(batch: SeededBatch, expected: string[], what: string): Promise<void> {
  await eventually(
    () => phaseStatuses(h.db, batch.batchId),
    (statuses) => JSON.stringify(statuses) === JSON.stringify(expected),
    what,
  );
}

/** What the batch workflow does when it wakes: its activity, then its completion checks again. */
const wake = (batch: SeededBatch, now = new Date()) => progressBatch(h.db, batch.batchId, now);

/** A phase's approval clock run out: the expiry moved to the past (the CHECKs allow this column). */
async function expire(batch: SeededBatch, sequence: number): Promise<void> {
  await sql`UPDATE phase_executions SET approval_expires_at = now() - interval '1 second'
    WHERE batch_id = ${batch.batchId} AND sequence = ${sequence}`.execute(h.db);
}

describe("a manual batch's gated phase", () => {
  it("waits for approval when advanced, sends nothing, then runs as if just advanced once approved", async () => {
    const batch = await seedBatch(h.db, gatedRunbook(GATED), membersWith(2));
    expect(await advance(batch, 0)).toBe("dispatched");
    await untilPhases(batch, ["completed", "pending", "pending"], "pre-checks to complete");

    expect(await advance(batch, 1)).toBe("awaiting_approval");
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed", "awaiting_approval", "pending"]);
    // A phase-due naming it (a stray copy, a retry of an old message) is not its approval.
    await deliverEvent(
      h.orchestrator,
      "phase-due",
      phaseDueBody(batch, 1),
      `phase-due:${batch.phases[1]!.id}`,
    );
    expect(await jobsSent(batch, "cutover")).toBe(0);
    expect((await stepsOf(h.db, batch.batchId)).filter((step) => step.phaseName === "cutover")).toEqual([]);

    const approved = await decide(batch, 1, "approve");
    expect(approved.kind).toBe("decided");
    await untilPhases(batch, ["completed", "completed", "pending"], "the approved cutover to complete");
    expect(await jobsSent(batch, "cutover")).toBe(2);
    expect(await phaseEvents(h.db, batch, "cutover")).toEqual([
      {
        from: "pending",
        to: "awaiting_approval",
        reason: "advanced by operator: waiting for approval",
        actor: OPERATOR,
      },
      { from: "awaiting_approval", to: "dispatched", reason: "approved by operator", actor: OPERATOR },
      { from: "dispatched", to: "completed", reason: "2 of 2 members succeeded", actor: null },
    ]);
    // Decided once: a second approval (a double click) finds nothing waiting.
    expect(await decide(batch, 1, "approve")).toMatchObject({
      kind: "phase_not_awaiting",
      status: "completed",
    });
  });

  it("fails with phase.rejected when rejected, sending nothing; the batch goes on as after a failed phase", async () => {
    const batch = await seedBatch(h.db, gatedRunbook(GATED), membersWith(2));
    expect(await advance(batch, 0)).toBe("dispatched");
    await untilPhases(batch, ["completed", "pending", "pending"], "pre-checks to complete");
    expect(await advance(batch, 1)).toBe("awaiting_approval");

    const rejected = await decide(batch, 1, "reject");
    expect(rejected).toMatchObject({
      kind: "decided",
      phase: { status: "failed", approvalDecision: "rejected", outcome: "failed", succeededMembers: 0 },
    });
    expect((await phaseEvents(h.db, batch, "cutover")).at(-1)).toEqual({
      from: "awaiting_approval",
      to: "failed",
      reason: "phase.rejected: rejected by operator",
      actor: OPERATOR,
    });
    expect(await jobsSent(batch, "cutover")).toBe(0);
    // As after any failed phase, the operator may still advance the next one, and the batch ends
    // once every phase has: completed (some phase completed), partially, since one failed.
    expect(await advance(batch, 2)).toBe("dispatched");
    await untilPhases(batch, ["completed", "failed", "completed"], "cleanup to complete");
    await wake(batch);
    expect(await batchStatus(h.db, batch.batchId)).toBe("completed");
    const outcome = await h.db
      .selectFrom("batches")
      .select("outcome")
      .where("id", "=", batch.batchId)
      .executeTakeFirstOrThrow();
    expect(outcome.outcome).toBe("partially_succeeded");
  });

  it("fails the batch when its only phase is rejected", async () => {
    const batch = await seedBatch(
      h.db,
      runbookYaml(`phases:
  - name: cutover
    offset: T-0
    approval: required
    steps:
      - name: move
        worker_id: worker-01
        function: Test-Echo
`),
      membersWith(1),
    );
    expect(await advance(batch, 0)).toBe("awaiting_approval");
    expect((await decide(batch, 0, "reject")).kind).toBe("decided");
    expect((await wake(batch)).finished).toBe(true);
    expect(await batchStatus(h.db, batch.batchId)).toBe("failed");
  });

  it("is not reopened by a redrive of a member that failed before it: a no-go stays a no-go", async () => {
    const failing = runbookYaml(`phases:
  - name: pre-checks
    offset: T-1h
    steps:
      - name: check
        worker_id: worker-01
        function: Test-Flaky
        params:
          FailTimes: "{{Fails}}"
  - name: cutover
    offset: T-0
    approval: required
    steps:
      - name: move
        worker_id: worker-01
        function: Test-Echo
`);
    const batch = await seedBatch(
      h.db,
      failing,
      membersWith(2, (index) => ({ Fails: index === 0 ? "1" : "0" })),
    );
    expect(await advance(batch, 0)).toBe("dispatched");
    await untilPhases(batch, ["completed", "pending"], "pre-checks to end with one failed member");
    expect(await advance(batch, 1)).toBe("awaiting_approval");
    expect((await decide(batch, 1, "reject")).kind).toBe("decided");
    await wake(batch);

    const redriven = await h.db
      .transaction()
      .execute((trx) =>
        redriveBatch(trx, { batchId: batch.batchId, target: { kind: "failedMembers" }, actor: OPERATOR }),
      );
    expect(redriven.ok).toBe(true);
    // The member reruns its pre-check (it succeeds the second time) and gets nothing in cutover.
    await eventually(
      async () => (await stepsOf(h.db, batch.batchId)).map((step) => [step.phaseName, step.status]),
      (steps) => steps.filter(([, status]) => status === "succeeded").length === 2,
      "the redriven pre-check to succeed",
    );
    await wake(batch);
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed", "failed"]);
    expect((await stepsOf(h.db, batch.batchId)).filter((step) => step.phaseName === "cutover")).toEqual([]);
  });
});

describe("an automated batch's gated phase", () => {
  /** Started 5 s ago: every phase (T-2h, T-1h, T-0) is due, the workflow's activity finds them all. */
  const past = () => new Date(Date.now() - 5_000);

  it("falls due into awaiting_approval, holds the later phases behind it, and releases both once approved", async () => {
    const batch = await seedBatch(h.db, gatedRunbook(GATED), membersWith(2), { startsAt: past() });
    await wake(batch);
    await untilPhases(
      batch,
      ["completed", "awaiting_approval", "pending"],
      "pre-checks to run, cutover to wait",
    );
    // Later wakes (the workflow's re-checks) still hold cleanup, though it is due.
    await wake(batch);
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed", "awaiting_approval", "pending"]);
    expect(await jobsSent(batch, "cleanup")).toBe(0);

    expect((await decide(batch, 1, "approve")).kind).toBe("decided");
    await wake(batch);
    await untilPhases(batch, ["completed", "completed", "completed"], "cutover and cleanup to run");
    expect((await wake(batch)).finished).toBe(true);
    expect(await batchStatus(h.db, batch.batchId)).toBe("completed");
  });

  it("applies the timeout's outcome on its own (approve), and the workflow's timer aims at the expiry", async () => {
    const gate = `${GATED}    approval_timeout: 2h\n    approval_timeout_outcome: approve\n`;
    const batch = await seedBatch(h.db, gatedRunbook(gate), membersWith(1), { startsAt: past() });
    await wake(batch);
    await untilPhases(batch, ["completed", "awaiting_approval", "pending"], "cutover to wait");
    const [, cutover] = await listPhases(h.db, batch.batchId);
    const progress = await wake(batch);
    // Nothing else is due: the workflow sleeps until the approval's expiry.
    expect(progress.nextDueAt).toBe(cutover!.approvalExpiresAt!.toISOString());
    const waited = cutover!.approvalExpiresAt!.getTime() - Date.now();
    expect(waited).toBeGreaterThan(2 * 3_600_000 - 120_000);

    await expire(batch, 1);
    await wake(batch);
    await untilPhases(batch, ["completed", "completed", "completed"], "the timed-out approval to run both");
    expect((await phaseEvents(h.db, batch, "cutover"))[1]).toEqual({
      from: "awaiting_approval",
      to: "dispatched",
      reason: "approval timed out: approved (approval_timeout_outcome approve)",
      actor: null,
    });
  });

  it("rejects by default when the timeout passes", async () => {
    const batch = await seedBatch(h.db, gatedRunbook(`${GATED}    approval_timeout: 1h\n`), membersWith(1), {
      startsAt: past(),
    });
    await wake(batch);
    await untilPhases(batch, ["completed", "awaiting_approval", "pending"], "cutover to wait");
    await expire(batch, 1);
    await wake(batch);
    expect((await phaseEvents(h.db, batch, "cutover"))[1]).toEqual({
      from: "awaiting_approval",
      to: "failed",
      reason: "phase.rejected: approval timed out (approval_timeout_outcome reject)",
      actor: null,
    });
    expect(await jobsSent(batch, "cutover")).toBe(0);
  });

  it("keeps waiting through a pause: approval refused while paused, the timeout applied only after the resume", async () => {
    const gate = `${GATED}    approval_timeout: 1h\n    approval_timeout_outcome: approve\n`;
    const batch = await seedBatch(h.db, gatedRunbook(gate), membersWith(1), { startsAt: past() });
    await wake(batch);
    await untilPhases(batch, ["completed", "awaiting_approval", "pending"], "cutover to wait");

    await h.db.transaction().execute((trx) => pauseBatch(trx, batch.batchId, { actor: OPERATOR }));
    expect(await decide(batch, 1, "approve")).toEqual({ kind: "batch_not_active", status: "paused" });
    await expire(batch, 1);
    await wake(batch);
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed", "awaiting_approval", "pending"]);

    await h.db.transaction().execute((trx) => resumeBatch(trx, batch.batchId, { actor: OPERATOR }));
    await wake(batch);
    await untilPhases(
      batch,
      ["completed", "completed", "completed"],
      "the resumed batch to apply the timeout",
    );
  });

  it("lets an operator reject while paused (nothing is sent)", async () => {
    const batch = await seedBatch(h.db, gatedRunbook(GATED), membersWith(1), { startsAt: past() });
    await wake(batch);
    await untilPhases(batch, ["completed", "awaiting_approval", "pending"], "cutover to wait");
    await h.db.transaction().execute((trx) => pauseBatch(trx, batch.batchId, { actor: OPERATOR }));
    expect((await decide(batch, 1, "reject")).kind).toBe("decided");
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed", "failed", "pending"]);
  });

  it("is cancelled with its batch, after which it cannot be approved", async () => {
    const batch = await seedBatch(h.db, gatedRunbook(GATED), membersWith(1), { startsAt: past() });
    await wake(batch);
    await untilPhases(batch, ["completed", "awaiting_approval", "pending"], "cutover to wait");
    const cancelled = await cancelBatch(h.db, batch.batchId, "batch.cancelled", { actor: OPERATOR });
    expect(cancelled?.phaseIds).toHaveLength(2);
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed", "cancelled", "cancelled"]);
    expect(await decide(batch, 1, "approve")).toMatchObject({
      kind: "phase_not_awaiting",
      status: "cancelled",
    });
    expect(await decide(batch, 1, "reject")).toMatchObject({
      kind: "phase_not_awaiting",
      status: "cancelled",
    });
    expect(await jobsSent(batch, "cutover")).toBe(0);
  });

  it("tells subscribed webhooks it waits, and how it was decided (operator or timeout)", async () => {
    const batch = await seedBatch(h.db, gatedRunbook(`${GATED}    approval_timeout: 1h\n`), membersWith(1), {
      startsAt: past(),
    });
    const webhook = await insertWebhook(h.db, {
      url: "https://hooks.example.test/approvals",
      runbookName: batch.runbookName,
      events: ["phase.awaiting_approval", "phase.approved", "phase.rejected", "phase.failed"],
      sealedSecret: h.secrets.seal("approval-webhook-secret-of-32-bytes"),
      createdBy: "test",
    });
    await wake(batch);
    await untilPhases(batch, ["completed", "awaiting_approval", "pending"], "cutover to wait");
    await expire(batch, 1);
    await wake(batch);
    const deliveries = await eventually(
      () => listDeliveries(h.db, webhook.id, { limit: 10 }),
      (rows) => rows.length === 3,
      "three notifications for the gate",
    );
    // Fanned out concurrently: in any order.
    expect(deliveries.map((delivery) => delivery.event).sort()).toEqual([
      "phase.awaiting_approval",
      "phase.failed",
      "phase.rejected",
    ]);
    const payloadOf = (event: string) =>
      phaseApprovalPayloadSchema.safeParse(deliveries.find((delivery) => delivery.event === event)?.payload);
    const [waiting, rejected] = [payloadOf("phase.awaiting_approval"), payloadOf("phase.rejected")];
    expect(waiting?.data).toMatchObject({
      phase: { name: "cutover" },
      approval: { timeoutOutcome: "reject", decidedBy: null },
    });
    expect(waiting?.data?.approval.expiresAt).not.toBeNull();
    expect(rejected?.data?.approval.decidedBy).toBe("timeout");
  });
});
