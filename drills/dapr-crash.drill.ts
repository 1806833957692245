/**
 * Dapr crash drill (issue 24): the crash drill on REAL daprd, placement and scheduler
 * (MATOOLKIT_DAPR_VERSION, newest pin by default) with components/local on a Redis of the
 * drill's own. The app (all four services, MATOOLKIT_RUNTIME=dapr) runs as a child process in its
 * own process group. Each round creates a manual batch of DRILL_MEMBERS (150) × 3 Drill-Record
 * steps and, at a seeded random point of its phase, kills with SIGKILL:
 * - `app`: the app's process group, then starts it again (daprd stays up, as when an app
 *   container dies and its pod's sidecar does not);
 * - `sidecar`: daprd, then starts it again on the same ports, app id, resources, control plane
 *   and Redis (a sidecar container crash);
 * - `both`: the app and daprd (the whole pod).
 * DRILL_DAPR_ROUNDS picks them (default `app,sidecar`). Targets: every step succeeded, 0 lost, 0
 * duplicated, none stuck, and each batch's workflow instance ended with it. What a killed daprd had taken from Redis Streams and not acknowledged
 * stays pending until processingTimeout (300 s, as shipped) has passed and a redeliver pass
 * (every 60 s) reclaims it, so a sidecar round may take up to about 6 minutes: the drill prints
 * that time instead of shortening the shipped timing, and gives such a round 8 minutes (an app
 * round 3). A round whose batch does not complete ends the drill.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { DrillContext, DrillOutcome } from "./drill.ts";
import {
  STEPS_PER_MEMBER,
  startManualBatch,
  tallyBatch,
  waitForBatchEnd,
  type BatchTally,
} from "./support/dapr-batch.ts";
import { waitForWorkflowEnd, workflowStatus } from "./support/dapr-sidecar.ts";
import { addTallies, daprDrillSettings, openDaprDrillSession, tallyFigures } from "./support/dapr-session.ts";
import { mulberry32 } from "./support/seeded-random.ts";

export const description =
  "real daprd: kill -9 of the app, then of its daprd, mid-phase; restart: 0 lost, 0 duplicated, batch completes";

/**
 * Restart to batch end. A killed daprd: Redis processingTimeout (300 s) + one redeliverInterval
 * (60 s) + room. The app alone: its deliveries in flight wait out their ledger lease (60 s, held
 * by the dead app) within daprd's inbound retries (~1 minute), + room.
 */
const ROUND_DEADLINE_SECONDS: Record<Kill, number> = { app: 180, sidecar: 480, both: 480 };
/** A batch's workflow instance ends at its next run: the nudge at the batch's end, else the 60 s re-check. */
const WORKFLOW_END_SECONDS = 90;
/** Concurrency of the app's worker: the jobs a kill can cut off between effect and record. */
const WORKER_CONCURRENCY = 16;

type Kill = "app" | "sidecar" | "both";

export async function run(context: DrillContext): Promise<DrillOutcome> {
  // A drill is an entry point (`npm run drill`): it reads its settings here.
  // eslint-disable-next-line no-restricted-properties
  const env = process.env;
  const settings = daprDrillSettings(env);
  const rounds = (env.DRILL_DAPR_ROUNDS ?? "app,sidecar").split(",").map((kind) => kind.trim()) as Kill[];
  const unknown = rounds.filter((kind) => !["app", "sidecar", "both"].includes(kind));
  if (unknown.length > 0)
    throw new Error(`DRILL_DAPR_ROUNDS: unknown ${unknown.join(", ")} (app, sidecar, both)`);
  const next = mulberry32(settings.seed);
  const session = await openDaprDrillSession({
    broker: "redis",
    name: "dapr-crash",
    settings,
    log: context.log,
  });
  const { api, work, stack } = session;
  const tallies: BatchTally[] = [];
  const seconds: Record<string, number> = {};
  const workflows: string[] = [];
  let appKills = 0;
  let passed = false;
  try {
    for (const [index, kind] of rounds.entries()) {
      const round = index + 1;
      const total = settings.members * STEPS_PER_MEMBER;
      const before = work.effects().length;
      const batchId = await startManualBatch(api, session.runbook, settings.members, `r${round}`);
      const killAt = Math.floor(total * (0.15 + next() * 0.6));
      const roundDeadline = Date.now() + ROUND_DEADLINE_SECONDS[kind] * 1000;
      while (work.effects().length - before < killAt && Date.now() < roundDeadline) await sleep(20);
      const running = await workflowStatus(stack.sidecar.httpEndpoint, batchId);
      if (kind !== "sidecar") await session.app().killHard();
      if (kind !== "app") await stack.sidecar.kill();
      if (kind !== "sidecar") appKills += 1;
      context.log(
        `round ${round} (${kind}): batch ${batchId} (workflow ${running}), kill -9 after ${work.effects().length - before} of ${total} steps`,
      );
      const restarted = Date.now();
      // A new pod starts its sidecar first; daprd then waits for the app's port.
      if (kind !== "app") await stack.sidecar.start();
      const appSeconds = kind === "sidecar" ? 0 : await session.startApp();
      const status = await waitForBatchEnd(api, batchId, restarted + ROUND_DEADLINE_SECONDS[kind] * 1000);
      const took = (Date.now() - restarted) / 1000;
      const tally = await tallyBatch(api, batchId, total, work);
      tallies.push(tally);
      // The batch can complete without its workflow (step results close phases and the batch);
      // the workflow instance ending too shows the app still runs workflows after the restart.
      const workflow =
        status === "completed"
          ? await waitForWorkflowEnd(stack.sidecar.httpEndpoint, batchId, WORKFLOW_END_SECONDS * 1000)
          : await workflowStatus(stack.sidecar.httpEndpoint, batchId);
      workflows.push(workflow);
      seconds[`seconds from restart to batch ${status}, round ${round} (${kind})`] = Number(took.toFixed(1));
      context.log(
        `round ${round} (${kind}): batch ${status} ${took.toFixed(1)} s after the restart` +
          `${kind === "sidecar" ? "" : ` (app ready after ${appSeconds.toFixed(1)} s)`}; ${tally.succeeded} succeeded, ` +
          `${tally.open} open, ${tally.lost} lost, ${tally.duplicated} duplicated, ${tally.rerun} re-run after worker.lost; ` +
          `workflow batch-${batchId} ${workflow}`,
      );
      // A batch left unfinished makes later rounds on the same system meaningless (and long).
      if (status !== "completed") {
        context.log(`round ${round} missed its target: no further rounds`);
        break;
      }
    }
    const result = tallyFigures(addTallies(tallies), WORKER_CONCURRENCY * appKills);
    const ended = workflows.filter((status) => status === "COMPLETED").length;
    passed =
      result.passed &&
      Object.keys(seconds).every((key) => key.includes("batch completed")) &&
      ended === rounds.length &&
      tallies.length === rounds.length;
    return {
      passed,
      figures: {
        rounds: `${rounds.slice(0, tallies.length).join(",")}${tallies.length < rounds.length ? ` (of ${rounds.join(",")})` : ""}`,
        ...result.figures,
        [`batch workflows COMPLETED within ${WORKFLOW_END_SECONDS} s of their batch`]: `${ended} of ${tallies.length} (${workflows.join(", ")})`,
        ...seconds,
      },
    };
  } finally {
    await session.close(!passed);
  }
}
