import {
  clearRunbookError,
  insertBatch,
  insertMembers,
  insertPhases,
  insertSteps,
  insertWebhook,
  publishRunbook,
  recordRunbookError,
  transitionBatch,
  transitionStep,
  type Db,
} from "@matoolkit/db";
import { alertDefinition, alertPayloadSchema, alertThresholds, notificationTypes } from "@matoolkit/domain";
import { createEmbeddedRuntime, createLogger, createMetrics } from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { startSchedulerService } from "../scheduler-service.ts";
import { evaluateAlerts } from "./evaluate-alerts.ts";

/**
 * The alert evaluator (issue 31) against real rows: each condition raised once and resolved once,
 * with one events row and one webhook notification per change, however many evaluator runs see
 * the same state (one after the other, or two at once as two scheduler replicas would).
 */
let database: TestDatabase;
let db: Db;
let runbookId: number;
const logger = createLogger({ name: "alerts-test", level: "silent" });
const evaluate = () => evaluateAlerts({ db, logger }, new Date());

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
  const runbook = await publishRunbook(db, {
    name: "hr-feed",
    yamlContent: "name: hr-feed\n",
    overdueBehavior: "rerun",
    rerunInit: false,
  });
  runbookId = runbook.id;
  // A global webhook takes every alert; the runbook's own takes only its runbook's.
  await insertWebhook(db, {
    url: "https://hooks.example.test/all",
    runbookName: null,
    events: ["alert.raised", "alert.resolved"],
    sealedSecret: "v1:test:sealed",
    createdBy: null,
  });
  await insertWebhook(db, {
    url: "https://hooks.example.test/hr",
    runbookName: "hr-feed",
    events: ["alert.raised"],
    sealedSecret: "v1:test:sealed",
    createdBy: null,
  });
});

afterAll(async () => {
  await database?.drop();
});

beforeEach(async () => {
  await db.deleteFrom("outbox").execute();
});

async function alertRows(conditionId: string) {
  return db.selectFrom("alerts").selectAll().where("conditionId", "=", conditionId).orderBy("id").execute();
}

async function alertEvents(alertId: number) {
  return db
    .selectFrom("events")
    .select(["fromStatus", "toStatus", "reason", "batchId"])
    .where("entity", "=", "alert")
    .where("entityId", "=", alertId)
    .orderBy("id")
    .execute();
}

async function notifications() {
  const rows = await db
    .selectFrom("outbox")
    .select(["messageId", "body"])
    .where("topic", "=", "notifications")
    .execute();
  return rows.map((row) => ({ messageId: row.messageId, body: alertPayloadSchema.parse(row.body) }));
}

describe("source-failing", () => {
  it("is raised at the third failed tick in a row, once, and resolved once by a good tick", async () => {
    const at = new Date();
    await recordRunbookError(db, runbookId, "datasource.unreachable: connection refused", at);
    await recordRunbookError(db, runbookId, "datasource.unreachable: connection refused", at);
    expect(await evaluate()).toEqual({ raised: 0, resolved: 0 });
    expect(await alertRows("source-failing")).toEqual([]);

    await recordRunbookError(db, runbookId, "datasource.unreachable: connection refused", at);
    expect(await evaluate()).toEqual({ raised: 1, resolved: 0 });
    const [alert] = await alertRows("source-failing");
    expect(alert).toMatchObject({
      subject: "runbook:hr-feed",
      severity: "critical",
      runbookName: "hr-feed",
      resolvedAt: null,
      details: { consecutiveFailures: 3, reasonCode: "datasource.unreachable" },
    });
    const raised = await notifications();
    expect(raised).toHaveLength(1);
    expect(raised[0]!.body).toMatchObject({
      type: "alert.raised",
      alert: { id: alert!.id, condition: "source-failing", subject: "runbook:hr-feed", resolvedAt: null },
    });

    // Re-evaluation, and two evaluators at once: nothing new.
    await db.deleteFrom("outbox").execute();
    await recordRunbookError(db, runbookId, "datasource.unreachable: connection refused", at);
    expect(await evaluate()).toEqual({ raised: 0, resolved: 0 });
    await Promise.all([evaluate(), evaluate()]);
    expect(await alertRows("source-failing")).toHaveLength(1);
    expect(await notifications()).toEqual([]);
    expect(await alertEvents(alert!.id)).toEqual([
      { fromStatus: null, toStatus: "open", reason: "source-failing", batchId: null },
    ]);

    await clearRunbookError(db, runbookId);
    const runs = await Promise.all([evaluate(), evaluate()]);
    expect(runs.reduce((sum, run) => sum + run.resolved, 0)).toBe(1);
    expect(await evaluate()).toEqual({ raised: 0, resolved: 0 });
    const [resolved] = await alertRows("source-failing");
    expect(resolved!.resolvedAt).toBeInstanceOf(Date);
    expect(await alertEvents(alert!.id)).toEqual([
      { fromStatus: null, toStatus: "open", reason: "source-failing", batchId: null },
      { fromStatus: "open", toStatus: "resolved", reason: "source-failing", batchId: null },
    ]);
    const resolvedNotes = await notifications();
    expect(resolvedNotes.map((note) => note.body.type)).toEqual(["alert.resolved"]);
    expect(resolvedNotes[0]!.body.alert.resolvedAt).not.toBeNull();
    // A failing streak that starts again is a new occurrence: a new alert.
    for (let tick = 0; tick < alertThresholds.sourceFailingTicks; tick++)
      await recordRunbookError(db, runbookId, "datasource.query_failed: x", at);
    expect(await evaluate()).toEqual({ raised: 1, resolved: 0 });
    expect(await alertRows("source-failing")).toHaveLength(2);
    await clearRunbookError(db, runbookId);
    await evaluate();
  });
});

describe("dead-letters", () => {
  it("is raised per subscription with dead letters in the window, global webhooks only", async () => {
    await sql`INSERT INTO bus_dead_letters (message_id, topic, subscription, body, properties, delivery_count, error)
      VALUES ('m-1', 'orchestrator-events', 'orchestrator', '{}', '{}', 10, 'x'),
             ('m-2', 'orchestrator-events', 'orchestrator', '{}', '{}', 10, 'x')`.execute(db);
    // The raise is logged as the Azure Monitor rule of the condition looks for it (definitions.ts).
    const lines: string[] = [];
    const capturing = createLogger({
      name: "alerts-test",
      level: "info",
      destination: { write: (line: string) => lines.push(line) },
    });
    expect(await evaluateAlerts({ db, logger: capturing }, new Date())).toEqual({ raised: 1, resolved: 0 });
    const wanted = [...alertDefinition("dead-letters").azure!.query.matchAll(/contains '([^']+)'/g)].map(
      (m) => m[1]!,
    );
    expect(wanted).toHaveLength(2);
    expect(lines.filter((line) => wanted.every((text) => line.includes(text)))).toHaveLength(1);
    const [alert] = await alertRows("dead-letters");
    expect(alert).toMatchObject({
      subject: "subscription:orchestrator-events/orchestrator",
      runbookName: null,
      details: { deadLetters: 2 },
    });
    const [note] = await notifications();
    expect(note!.body.alert).toMatchObject({
      condition: "dead-letters",
      runbookName: null,
      severity: "critical",
    });
    expect(await evaluate()).toEqual({ raised: 0, resolved: 0 });

    // Out of the window (older than a day): resolved.
    await sql`UPDATE bus_dead_letters SET dead_lettered_at = now() - interval '2 days'`.execute(db);
    expect(await evaluate()).toEqual({ raised: 0, resolved: 1 });
    expect(await evaluate()).toEqual({ raised: 0, resolved: 0 });
    expect((await alertEvents(alert!.id)).map((event) => event.toStatus)).toEqual(["open", "resolved"]);
  });
});

describe("batch conditions", () => {
  let batchId: number;
  let phaseId: number;
  let memberIds: number[];

  beforeAll(async () => {
    const batch = await insertBatch(db, { runbookId, batchStartTime: null, isManual: true, createdBy: null });
    batchId = batch.id;
    await transitionBatch(db, batchId, "activate");
    memberIds = (
      await insertMembers(
        db,
        batchId,
        Array.from({ length: 25 }, (_, index) => ({ memberKey: `m-${index}`, data: {} })),
      )
    ).map((member) => member.id);
    const [phase] = await insertPhases(db, batchId, [
      {
        phaseName: "cutover",
        sequence: 0,
        offsetMinutes: 0,
        dueAt: new Date(Date.now() - (alertThresholds.phaseDueGraceSeconds + 60) * 1000),
        runbookVersion: 1,
      },
    ]);
    phaseId = phase!.id;
  });

  it("phase-not-dispatched: a phase due past the grace and pending, resolved when dispatched", async () => {
    expect(await evaluate()).toMatchObject({ raised: 1 });
    const [alert] = await alertRows("phase-not-dispatched");
    expect(alert).toMatchObject({ subject: `phase:${phaseId}`, batchId, runbookName: "hr-feed" });
    // One message for both webhooks (the global one and the runbook's own): the notifier fans out.
    expect((await notifications()).map((note) => note.body.alert.condition)).toEqual([
      "phase-not-dispatched",
    ]);
    expect(await alertEvents(alert!.id)).toEqual([
      { fromStatus: null, toStatus: "open", reason: "phase-not-dispatched", batchId },
    ]);
    await sql`UPDATE phase_executions SET status = 'dispatched', dispatched_at = now() WHERE id = ${phaseId}`.execute(
      db,
    );
    expect(await evaluate()).toEqual({ raised: 0, resolved: 1 });
  });

  it("steps-past-timeout and throttled-share: per batch and per pool", async () => {
    await insertSteps(
      db,
      memberIds.map((memberId) => ({
        batchId,
        phaseExecutionId: phaseId,
        batchMemberId: memberId,
        stepName: "move",
        stepIndex: 0,
        workerId: "pool-a",
        functionName: "Move-Mailbox",
        timeoutSec: 60,
      })),
    );
    const steps = await db
      .selectFrom("stepExecutions")
      .select("id")
      .where("batchId", "=", batchId)
      .orderBy("id")
      .execute();
    const longAgo = new Date(Date.now() - (60 + alertThresholds.stepTimeoutGraceSeconds + 60) * 1000);
    await transitionStep(db, steps[0]!.id, "dispatch", { set: { dispatchedAt: longAgo } });
    // 24 results in the window, 6 of them throttled: 25 % of the pool's work.
    for (const [index, step] of steps.slice(1).entries()) {
      await transitionStep(db, step.id, "dispatch");
      await transitionStep(db, step.id, index < 6 ? "fail" : "succeed", {
        set: { completedAt: new Date(), errorCode: index < 6 ? "graph.throttled" : null },
      });
    }
    expect(await evaluate()).toEqual({ raised: 2, resolved: 0 });
    expect(await alertRows("steps-past-timeout")).toMatchObject([
      { subject: `batch:${batchId}`, batchId, details: { steps: 1 } },
    ]);
    expect(await alertRows("throttled-share")).toMatchObject([
      { subject: "pool:pool-a", severity: "warning", details: { results: 24, throttled: 6, share: 0.25 } },
    ]);
    await transitionStep(db, steps[0]!.id, "succeed", { set: { completedAt: new Date() } });
    await sql`UPDATE step_executions SET completed_at = now() - interval '1 hour' WHERE batch_id = ${batchId}`.execute(
      db,
    );
    expect(await evaluate()).toEqual({ raised: 0, resolved: 2 });
  });

  it("batch-failed: raised when the batch fails, never twice, resolved by a redrive, raised anew when it fails again", async () => {
    await transitionBatch(db, batchId, "fail");
    expect(await evaluate()).toEqual({ raised: 1, resolved: 0 });
    expect(await evaluate()).toEqual({ raised: 0, resolved: 0 });
    expect(await alertRows("batch-failed")).toMatchObject([
      { subject: `batch:${batchId}`, severity: "warning" },
    ]);
    await transitionBatch(db, batchId, "reopen");
    expect(await evaluate()).toEqual({ raised: 0, resolved: 1 });
    await transitionBatch(db, batchId, "fail");
    expect(await evaluate()).toEqual({ raised: 1, resolved: 0 });
    expect((await alertRows("batch-failed")).map((alert) => alert.resolvedAt === null)).toEqual([
      false,
      true,
    ]);
  });
});

describe("startSchedulerService", () => {
  it("evaluates on its alerts-evaluate timer and serves the open alerts as matoolkit_alerts_open", async () => {
    const payroll = await publishRunbook(db, {
      name: "payroll",
      yamlContent: "name: payroll\n",
      overdueBehavior: "rerun",
      rerunInit: false,
    });
    for (let tick = 0; tick < alertThresholds.sourceFailingTicks; tick++)
      await recordRunbookError(db, payroll.id, "datasource.unreachable: x", new Date());
    const metrics = createMetrics({ defaultMetrics: false });
    const runtime = await createEmbeddedRuntime({
      connectionString: database.url,
      db,
      logger,
      pollingIntervalSeconds: 0.1,
    });
    try {
      await startSchedulerService({
        db,
        timers: runtime.timers,
        logger,
        dataSources: { query: async () => [], rows: async function* () {}, accessProblems: async () => [] },
        pollSweepSeconds: 3600,
        tickSeconds: 3600,
        alertsEvaluateSeconds: 1,
        metrics,
      });
      await vi.waitFor(
        async () =>
          expect(
            (await alertRows("source-failing")).filter((alert) => alert.resolvedAt === null),
          ).toMatchObject([{ subject: "runbook:payroll" }]),
        { timeout: 15_000, interval: 200 },
      );
      const { body } = await metrics.expose();
      expect(body).toContain('matoolkit_alerts_open{condition="source-failing",severity="critical"} 1');
    } finally {
      await runtime.stop();
    }
  });
});

it("the webhook event types include the alert events", () => {
  expect(notificationTypes).toEqual(expect.arrayContaining(["alert.raised", "alert.resolved"]));
});
