/**
 * Broker swap drill (issue 32, point 4): the same batch on REAL daprd (MATOOLKIT_DAPR_VERSION,
 * newest pin by default) once per broker, with only the component folder changed:
 * components/local (Redis Streams), components/rabbitmq, components/nats (JetStream), each on a
 * fresh system of its own (support/dapr-stack.ts). The batch (support/swap-batch.ts): DRILL_MEMBERS
 * (100) members, one phase of a pre-check that fails every tenth member, three Drill-Record steps,
 * a step that fails once and is retried (a delayed job) and a step polled once. DRILL_SWAP_BROKERS
 * picks the brokers (default all three, in that order).
 *
 * Targets: on every broker the batch completes, nothing lost, nothing duplicated, nothing stuck,
 * and the outcomes (batch status, every step's status and reason code, counted; member statuses)
 * are the same as on the first. Printed side by side with the time from dispatch to batch end and
 * the steps per second. `components/aws` is not in the swap: its SQS emulator here (goaws 0.4.5)
 * cannot serve Dapr's SQS client at all (components/README.md, "What ran where").
 */
import type { DrillContext, DrillOutcome } from "./drill.ts";
import { waitForBatchEnd } from "./support/dapr-batch.ts";
import { daprDrillSettings, openDaprDrillSession } from "./support/dapr-session.ts";
import { drillBrokerProfiles, isDrillBroker, type DrillBroker } from "./support/dapr-stack.ts";
import {
  expectedFailedMembers,
  startSwapBatch,
  swapOutcome,
  swapRunbook,
  type SwapOutcome,
} from "./support/swap-batch.ts";

export const description =
  "real daprd: one batch on Redis, RabbitMQ and NATS JetStream, only the component folder changed: same outcomes, 0 lost, 0 duplicated";

const AWS_NOT_IN_SWAP =
  "aws: not run, goaws 0.4.5 answers every SQS call of Dapr's client (AWS JSON protocol) 400, and dynalite has no TransactWriteItems (components/README.md)";

/** Dispatch to batch end: the batch takes about a minute on an idle machine; room for a loaded one. */
const DEADLINE_SECONDS = 600;

interface BrokerRun {
  readonly broker: DrillBroker;
  readonly outcome: SwapOutcome;
  readonly seconds: number;
}

export async function run(context: DrillContext): Promise<DrillOutcome> {
  // A drill is an entry point (`npm run drill`): it reads its settings here.
  // eslint-disable-next-line no-restricted-properties
  const env = process.env;
  const settings = daprDrillSettings(env, 100);
  const wanted = (env.DRILL_SWAP_BROKERS ?? "redis,rabbitmq,nats").split(",").map((name) => name.trim());
  const unknown = wanted.filter((name) => !isDrillBroker(name));
  if (unknown.length > 0)
    throw new Error(
      `DRILL_SWAP_BROKERS: unknown ${unknown.join(", ")} (redis, rabbitmq, nats)${unknown.includes("aws") ? `; ${AWS_NOT_IN_SWAP}` : ""}`,
    );
  const runs: BrokerRun[] = [];
  for (const broker of wanted as DrillBroker[]) {
    const session = await openDaprDrillSession({
      broker,
      name: `dapr-broker-swap-${broker}`,
      settings,
      log: context.log,
    });
    let ok = false;
    try {
      const runbook = `swap-${settings.seed}`;
      await session.api("POST", "/runbooks", swapRunbook(runbook, settings.stepSeconds), "application/yaml");
      const { batchId, dispatchedAt } = await startSwapBatch(session.api, runbook, settings.members);
      const status = await waitForBatchEnd(session.api, batchId, dispatchedAt + DEADLINE_SECONDS * 1000);
      const seconds = (Date.now() - dispatchedAt) / 1000;
      const outcome = await swapOutcome(session.api, batchId, settings.members, session.work);
      runs.push({ broker, outcome, seconds });
      ok = status === "completed" && outcome.lost === 0 && outcome.duplicated === 0 && outcome.open === 0;
      context.log(
        `${broker} (${drillBrokerProfiles[broker].folder}): batch ${batchId} ${status} in ${seconds.toFixed(1)} s; ` +
          `${outcome.lost} lost, ${outcome.duplicated} duplicated, ${outcome.open} open`,
      );
    } finally {
      await session.close(!ok);
    }
  }
  context.log(AWS_NOT_IN_SWAP);
  for (const line of sideBySide(runs)) context.log(line);
  const first = runs[0];
  const same = (run: BrokerRun) => first !== undefined && signature(run.outcome) === signature(first.outcome);
  const failedMembers = (run: BrokerRun) => run.outcome.members.failed ?? 0;
  const passed = runs.every(
    (run) =>
      run.outcome.batchStatus === "completed" &&
      run.outcome.lost === 0 &&
      run.outcome.duplicated === 0 &&
      run.outcome.open === 0 &&
      failedMembers(run) === expectedFailedMembers(settings.members) &&
      same(run),
  );
  const figures: Record<string, string | number> = { brokers: wanted.join(","), members: settings.members };
  for (const run of runs) {
    figures[`${run.broker}: lost`] = run.outcome.lost;
    figures[`${run.broker}: duplicated`] = run.outcome.duplicated;
    figures[`${run.broker}: steps per second`] = (run.outcome.stepCount / run.seconds).toFixed(1);
    figures[`${run.broker}: same outcomes as ${first!.broker}`] = same(run) ? "yes" : "NO";
  }
  return { passed, figures };
}

const signature = (outcome: SwapOutcome): string =>
  JSON.stringify({ batch: outcome.batchStatus, steps: outcome.steps, members: outcome.members });

/** One column per broker: the outcome rows, then lost/duplicated/open, time and throughput. */
function sideBySide(runs: readonly BrokerRun[]): string[] {
  const keys = [...new Set(runs.flatMap((run) => Object.keys(run.outcome.steps)))].sort();
  const memberKeys = [...new Set(runs.flatMap((run) => Object.keys(run.outcome.members)))].sort();
  const rows: Array<[string, ...string[]]> = [
    ["", ...runs.map((run) => run.broker)],
    ["component folder", ...runs.map((run) => `components/${drillBrokerProfiles[run.broker].folder}`)],
    ["batch", ...runs.map((run) => run.outcome.batchStatus)],
    ...memberKeys.map((key): [string, ...string[]] => [
      `members ${key}`,
      ...runs.map((run) => String(run.outcome.members[key] ?? 0)),
    ]),
    ...keys.map((key): [string, ...string[]] => [
      key,
      ...runs.map((run) => String(run.outcome.steps[key] ?? 0)),
    ]),
    ["lost", ...runs.map((run) => String(run.outcome.lost))],
    ["duplicated", ...runs.map((run) => String(run.outcome.duplicated))],
    ["open", ...runs.map((run) => String(run.outcome.open))],
    ["seconds, dispatch to end", ...runs.map((run) => run.seconds.toFixed(1))],
    ["steps per second", ...runs.map((run) => (run.outcome.stepCount / run.seconds).toFixed(1))],
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[column]!)))
      .join("  "),
  );
}
