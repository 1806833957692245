/**
 * Dapr broker restart drill (issue 24): on REAL daprd (MATOOLKIT_DAPR_VERSION, newest pin by
 * default), the broker goes down mid-batch for DRILL_DOWN_SECONDS (10) and comes back:
 * - `redis`: components/local on a redis-server of the drill's own with appendonly yes and
 *   appendfsync always (what was acknowledged survives), stopped with SIGTERM and started again
 *   on the same port and data. It is the state store too (idempotency keys, workflow state).
 * - `rabbitmq`: components/rabbitmq (durable queues, persistent messages, publisher confirms) on
 *   the machine's RabbitMQ, in a vhost of the drill's own, with `rabbitmqctl stop_app` then
 *   `start_app`: that touches the machine's broker, so start_app always runs (finally, signals).
 * DRILL_BROKERS picks them (default both, one after the other, each with a system of its own).
 * Each part runs a manual batch of DRILL_MEMBERS (150) × 3 Drill-Record steps with the outage at
 * a seeded point of its phase. Targets: the batch completes, every step succeeded, 0 lost, 0
 * duplicated. What daprd had taken from Redis Streams without acknowledging it before the outage
 * comes back after processingTimeout (300 s, as shipped): the drill prints the time it costs.
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
import type { DrillBroker } from "./support/dapr-stack.ts";
import { mulberry32 } from "./support/seeded-random.ts";

export const description =
  "real daprd: the broker (own Redis with appendonly; RabbitMQ) restarted mid-batch: 0 lost, 0 duplicated, batch completes";

/**
 * Broker back to batch end. Redis: processingTimeout (300 s) + one redeliverInterval (60 s) +
 * room, for what daprd read but could not acknowledge. RabbitMQ hands unacknowledged messages
 * back as soon as their channel closes, so it needs no such wait.
 */
const DEADLINE_SECONDS: Partial<Record<DrillBroker, number>> = { redis: 480, rabbitmq: 180 };

export async function run(context: DrillContext): Promise<DrillOutcome> {
  // A drill is an entry point (`npm run drill`): it reads its settings here.
  // eslint-disable-next-line no-restricted-properties
  const env = process.env;
  const settings = daprDrillSettings(env);
  const downMs = Number(env.DRILL_DOWN_SECONDS ?? 10) * 1000;
  const brokers = (env.DRILL_BROKERS ?? "redis,rabbitmq").split(",").map((b) => b.trim()) as DrillBroker[];
  const unknown = brokers.filter((broker) => broker !== "redis" && broker !== "rabbitmq");
  if (unknown.length > 0) throw new Error(`DRILL_BROKERS: unknown ${unknown.join(", ")} (redis, rabbitmq)`);
  const next = mulberry32(settings.seed);
  const tallies: BatchTally[] = [];
  const figures: Record<string, string | number> = {};
  let completed = true;
  for (const broker of brokers) {
    const session = await openDaprDrillSession({
      broker,
      name: `dapr-broker-restart-${broker}`,
      settings,
      log: context.log,
    });
    const { api, work, stack } = session;
    let ok = false;
    try {
      const total = settings.members * STEPS_PER_MEMBER;
      const batchId = await startManualBatch(api, session.runbook, settings.members, broker);
      const outageAt = Math.floor(total * (0.15 + next() * 0.5));
      while (work.effects().length < outageAt) await sleep(20);
      context.log(
        `${broker}: batch ${batchId}, broker down for ${downMs / 1000} s after ${work.effects().length} of ${total} steps`,
      );
      await stack.restartBroker(downMs);
      const back = Date.now();
      const status = await waitForBatchEnd(api, batchId, back + DEADLINE_SECONDS[broker]! * 1000);
      const took = (Date.now() - back) / 1000;
      const tally = await tallyBatch(api, batchId, total, work);
      tallies.push(tally);
      // The workflow ends at its next run after the batch (the batch-ended nudge, else 60 s).
      const workflow =
        status === "completed"
          ? await waitForWorkflowEnd(stack.sidecar.httpEndpoint, batchId, 90_000)
          : await workflowStatus(stack.sidecar.httpEndpoint, batchId);
      completed &&= status === "completed" && workflow === "COMPLETED";
      ok = status === "completed" && tally.lost === 0 && tally.duplicated === 0 && tally.open === 0;
      figures[`${broker}: seconds from the broker's return to batch ${status}`] = took.toFixed(1);
      figures[`${broker}: batch workflow`] = workflow;
      context.log(
        `${broker}: batch ${status} ${took.toFixed(1)} s after the broker returned; ${tally.succeeded} succeeded, ` +
          `${tally.open} open, ${tally.lost} lost, ${tally.duplicated} duplicated, ${tally.rerun} re-run after worker.lost; ` +
          `workflow batch-${batchId} ${workflow}`,
      );
    } finally {
      await session.close(!ok);
    }
  }
  // No process is killed: a re-run after worker.lost would be a lease lapsing during the outage.
  const result = tallyFigures(addTallies(tallies), 0);
  return {
    passed: result.passed && completed,
    figures: { brokers: brokers.join(","), [`seconds down`]: downMs / 1000, ...result.figures, ...figures },
  };
}
