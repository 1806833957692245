/**
 * Dapr sidecar restart drill (issue 24): daprd stopped and started again (SIGTERM, as a rolling
 * restart of the sidecar container does) while batch workflow instances run on Dapr Workflow:
 * DRILL_BATCHES (2) manual batches of DRILL_MEMBERS (100) × 3 Drill-Record steps mid-phase, and
 * one automated batch whose second phase falls due while daprd is down, so its workflow waits on
 * a durable timer (a Scheduler reminder) across the restart. daprd stays down DRILL_DOWN_SECONDS
 * (20), then comes back on the same ports, app id, resources, control plane and Redis
 * (components/local, processingTimeout 300s as shipped). Targets: every batch completes, every
 * step succeeded once, 0 lost, 0 duplicated; the due phase dispatched once daprd is back; every
 * workflow instance ends with its batch.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createDb, type Db } from "@matoolkit/db";
import { seedAutomatedBatch } from "../services/all-in-one/test/test-support.ts";
import type { DrillContext, DrillOutcome } from "./drill.ts";
import {
  drillRunbook,
  STEPS_PER_MEMBER,
  startManualBatch,
  tallyBatch,
  waitForBatchEnd,
} from "./support/dapr-batch.ts";
import { waitForWorkflowEnd, workflowStatus } from "./support/dapr-sidecar.ts";
import { addTallies, daprDrillSettings, openDaprDrillSession, tallyFigures } from "./support/dapr-session.ts";

export const description =
  "real daprd restarted with batch workflows in flight (one on a durable timer due meanwhile): all complete, 0 lost, 0 duplicated";

/** Restart to completion: Redis processingTimeout (300 s) + one redeliverInterval (60 s) + room. */
const DEADLINE_SECONDS = 480;
const AUTOMATED_MEMBERS = 20;

export async function run(context: DrillContext): Promise<DrillOutcome> {
  // A drill is an entry point (`npm run drill`): it reads its settings here.
  // eslint-disable-next-line no-restricted-properties
  const env = process.env;
  const settings = daprDrillSettings(env, 100);
  const batches = Number(env.DRILL_BATCHES ?? 2);
  const downMs = Number(env.DRILL_DOWN_SECONDS ?? 20) * 1000;
  const session = await openDaprDrillSession({
    broker: "redis",
    name: "dapr-sidecar-restart",
    settings,
    log: context.log,
  });
  const { api, work, stack } = session;
  const db = createDb({
    connectionString: stack.databaseUrl,
    maxConnections: 2,
    applicationName: "dapr-drill",
  });
  let passed = false;
  try {
    const manual: number[] = [];
    for (let index = 1; index <= batches; index++)
      manual.push(await startManualBatch(api, session.runbook, settings.members, `b${index}`));
    const manualSteps = settings.members * STEPS_PER_MEMBER;
    // Stop once a quarter of the manual work is done; the automated batch's second phase falls
    // due halfway through the outage (its first, a day early, is overdue and runs at once).
    while (work.effects().length < (manualSteps * batches) / 4) await sleep(20);
    const stopAt = Date.now();
    // Whole seconds: the scheduler matches the CSV's StartsAt to the batch's start to the ms.
    const dueAt = new Date(Math.ceil((stopAt + downMs / 2) / 1000) * 1000);
    const memberKeys = Array.from({ length: AUTOMATED_MEMBERS }, (_, i) => `auto${i}@contoso.test`);
    writeFileSync(
      path.join(work.csvDir, "automated.csv"),
      `Upn,StartsAt\n${memberKeys.map((key) => `${key},${dueAt.toISOString()}`).join("\n")}\n`,
    );
    const automated = await seedAutomatedBatch(db, {
      name: "dapr-sidecar-restart-automated",
      yaml: automatedRunbook(settings.stepSeconds),
      startsAt: dueAt,
      memberKeys,
    });
    // Its workflow has run its first pass (the overdue phase dispatched) and waits on its timer.
    await until(async () => (await phaseOf(db, automated, "early"))?.dispatchedAt != null, 30_000);
    const all = [...manual, automated];
    const statuses = await Promise.all(all.map((id) => workflowStatus(stack.sidecar.httpEndpoint, id)));
    const running = statuses.filter((status) => status === "RUNNING").length;
    context.log(
      `daprd stopped after ${work.effects().length} of ${manualSteps * batches} manual steps; workflows ${all.map((id, i) => `batch-${id} ${statuses[i]}`).join(", ")}`,
    );
    await stack.sidecar.stop();
    await sleep(Math.max(0, stopAt + downMs - Date.now()));
    const restarted = Date.now();
    await stack.sidecar.start();
    context.log(
      `daprd back after ${((restarted - stopAt) / 1000).toFixed(1)} s (phase due ${dueAt.toISOString()})`,
    );
    const ended = await Promise.all(
      all.map((id) => waitForBatchEnd(api, id, restarted + DEADLINE_SECONDS * 1000)),
    );
    const took = (Date.now() - restarted) / 1000;
    const tallies = await Promise.all(
      all.map((id, i) => tallyBatch(api, id, i < batches ? manualSteps : AUTOMATED_MEMBERS * 2, work)),
    );
    // Batches complete without their workflow (step results close them), except the automated
    // one's due phase; every instance ending shows the app still runs workflows after the restart.
    const workflows = await Promise.all(
      all.map((id, i) =>
        ended[i] === "completed"
          ? waitForWorkflowEnd(stack.sidecar.httpEndpoint, id, 90_000)
          : workflowStatus(stack.sidecar.httpEndpoint, id),
      ),
    );
    const onTime = await phaseOf(db, automated, "on-time");
    const dispatchedBy = await db
      .selectFrom("events")
      .select("reason")
      .where("entity", "=", "phase")
      .where("entityId", "=", onTime?.id ?? -1)
      .where("toStatus", "=", "dispatched")
      .executeTakeFirst();
    const lag =
      onTime?.dispatchedAt && onTime.dueAt
        ? (onTime.dispatchedAt.getTime() - onTime.dueAt.getTime()) / 1000
        : NaN;
    const result = tallyFigures(addTallies(tallies), 0);
    const workflowsEnded = workflows.filter((status) => status === "COMPLETED").length;
    passed =
      result.passed &&
      ended.every((status) => status === "completed") &&
      running === all.length &&
      workflowsEnded === all.length;
    return {
      passed,
      figures: {
        "batches (manual + automated)": `${batches} + 1`,
        "workflow instances RUNNING at the stop": `${running} of ${all.length}`,
        "seconds daprd was down": ((restarted - stopAt) / 1000).toFixed(1),
        "batch statuses": ended.join(", "),
        ...result.figures,
        "batch workflows COMPLETED after the restart": `${workflowsEnded} of ${all.length} (${workflows.join(", ")})`,
        "seconds from daprd's restart to every batch ended": took.toFixed(1),
        "seconds the phase due during the outage was dispatched after its due time": lag.toFixed(1),
        "that phase dispatched by": dispatchedBy?.reason ?? "nobody",
      },
    };
  } finally {
    await db.destroy();
    await session.close(!passed);
  }
}

/** Two phases of one step: `early` a day before the start (overdue, runs at once), `on-time` at it. */
function automatedRunbook(stepSeconds: number): string {
  const phases = [
    { name: "early", offset: "T-1d", steps: 1 },
    { name: "on-time", offset: "T-0", steps: 1 },
  ];
  return drillRunbook("dapr-sidecar-restart-automated", stepSeconds, {
    phases,
    automatedCsv: "automated.csv",
  });
}

function phaseOf(db: Db, batchId: number, phaseName: string) {
  return db
    .selectFrom("phaseExecutions")
    .select(["id", "dueAt", "dispatchedAt"])
    .where("batchId", "=", batchId)
    .where("phaseName", "=", phaseName)
    .executeTakeFirst();
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await sleep(200);
}
