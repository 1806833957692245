/**
 * Malformed messages (issue 11): while a real manual batch runs (100 members × 3 steps of a
 * side-effect-recording function, the outage drill's fixture), 1,000 malformed messages are
 * published on EVERY topic (orchestrator-events, worker-jobs, worker-results) through the same
 * bus port the system uses (an embedded runtime on the system's database): not objects, missing
 * fields, wrong types, unknown message types, huge bodies, valid shapes with unknown ids or a
 * forged JobId for a running step, valid shapes for a completed and a cancelled batch, a wrong
 * WorkerId, NUL characters. Target: the system process never exits and stays ready, the batch
 * completes with every step once (0 lost, 0 duplicated), and every malformed message is
 * dead-lettered or taken (ignored) by its handler: none left being retried.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createDb } from "@matoolkit/db";
import { topics, type Topic } from "@matoolkit/domain";
import { createEmbeddedRuntime, createLogger } from "@matoolkit/runtime";
import type { DrillContext, DrillOutcome } from "./drill.ts";
import { embeddedDrillDatabase, serverDrillDatabase, type DrillDatabase } from "./support/outage-database.ts";
import { countSideEffects, writeOutageFixture } from "./support/outage-fixture.ts";
import { freePort, watchReadiness } from "./support/outage-readiness.ts";
import { startSystem } from "./support/system-process.ts";
import { readBatchRows, succeededSteps } from "./support/messages-batch-rows.ts";
import { malformedMessages, type CatalogueIds } from "./support/messages-catalogue.ts";
import { publishAll } from "./support/messages-publish.ts";
import { batchDeadLetters, malformedFates } from "./support/messages-queues.ts";
import { mulberry32 } from "./support/seeded-random.ts";
import { drillApi } from "./support/messages-system-api.ts";
import { systemLogFindings } from "./support/messages-system-log.ts";

// A drill is an entry point (`npm run drill`): it reads its own settings.
// eslint-disable-next-line no-restricted-properties
const env = process.env;
const MEMBERS = Number(env.MATOOLKIT_DRILL_MEMBERS ?? 100);
const PER_TOPIC = Number(env.MATOOLKIT_DRILL_MALFORMED_PER_TOPIC ?? 1000);
const SEED = Number(env.MATOOLKIT_DRILL_SEED ?? 11);
const SETTLE_MS = 120_000;
const allTopics: readonly Topic[] = [topics.orchestratorEvents, topics.workerJobs, topics.workerResults];

export const description =
  "1,000 malformed messages on every topic during a batch: 0 crashes, batch complete, none retried forever";

export async function run({ log }: DrillContext): Promise<DrillOutcome> {
  const started = Date.now();
  const dir = mkdtempSync(path.join(tmpdir(), "matoolkit-drill-malformed-"));
  chmodSync(dir, 0o755); // as root, the embedded server runs as `postgres` and must enter it
  const dataDir = path.join(dir, "data");
  const fixture = writeOutageFixture(dir, MEMBERS, 3);
  const serverUrl = env.DATABASE_URL;
  const database: DrillDatabase =
    serverUrl !== undefined && serverUrl !== ""
      ? await serverDrillDatabase(serverUrl)
      : embeddedDrillDatabase(dataDir, await freePort());
  const port = await freePort();
  const logFile = path.join(dir, "system.log");
  log(
    `database: ${database.kind}; ${MEMBERS} members × 3 steps; ${PER_TOPIC} malformed per topic; work dir ${dir}`,
  );
  const system = await startSystem({
    port,
    logFile,
    env: {
      ...database.env,
      PORT: String(port),
      MATOOLKIT_DATA_DIR: dataDir,
      MATOOLKIT_FUNCTIONS_DIR: fixture.functionsDir,
      MATOOLKIT_CSV_DIR: fixture.csvDir,
      // Slow enough that the batch is still running while the messages arrive.
      MATOOLKIT_WORKER_CONCURRENCY: "2",
      LOG_LEVEL: "info",
    },
  });
  const readiness = watchReadiness(system.apiUrl);
  const logger = createLogger({ level: "silent", name: "malformed-drill" });
  const db = createDb({
    connectionString: database.url,
    maxConnections: 8,
    applicationName: "malformed-drill",
  });
  let runtime: Awaited<ReturnType<typeof createEmbeddedRuntime>> | undefined;
  let keep = env.DRILL_KEEP === "1";
  try {
    const api = await drillApi(system.apiUrl, dataDir, "malformed-drill@example.test");
    await api.call("POST", "/runbooks", fixture.runbookYaml, "application/yaml");
    const csv = (prefix: string, n: number) =>
      `Upn,MigrationDate\n${Array.from({ length: n }, (_, i) => `${prefix}${i}@contoso.test,2030-01-01T09:00:00Z`).join("\n")}\n`;
    const completedId = await api.createBatch(fixture.runbookName, csv("done", 3));
    await api.startPhase(completedId);
    const completedStatus = await api.waitForEnd(completedId, 120_000);
    const cancelledId = await api.createBatch(fixture.runbookName, csv("cancel", 3));
    await api.call("POST", `/batches/${cancelledId}/cancel`);
    log(`side batches: ${completedId} ${completedStatus}, ${cancelledId} cancelled`);

    const batchId = await api.createBatch(fixture.runbookName, fixture.membersCsv);
    await api.startPhase(batchId);
    const ids: CatalogueIds = {
      runbookName: fixture.runbookName,
      runbookVersion: 1,
      workerId: "worker-01",
      running: await readBatchRows(database.url, batchId),
      completed: await readBatchRows(database.url, completedId),
      cancelled: await readBatchRows(database.url, cancelledId),
    };
    runtime = await createEmbeddedRuntime({ connectionString: database.url, db, logger });
    const random = mulberry32(SEED);
    const messages = allTopics.flatMap((topic) => malformedMessages(topic, PER_TOPIC, ids, random));
    const floodStarted = Date.now();
    const published = await publishAll(runtime.bus, messages, 8);
    const floodSeconds = (Date.now() - floodStarted) / 1000;
    log(
      `published in ${floodSeconds.toFixed(1)} s, ${countSideEffects(fixture).executed} batch steps ran meanwhile`,
    );

    const status = await api.waitForEnd(batchId, 300_000);
    const batchSeconds = (Date.now() - floodStarted) / 1000;
    log(`batch ${batchId} ${status}; waiting for the malformed messages to settle`);
    const accepted = [...published.values()].flatMap((tally) => tally.accepted);
    let fates = await malformedFates(database.url, accepted);
    const settleDeadline = Date.now() + SETTLE_MS;
    while (fates.some((fate) => fate.open > 0) && Date.now() < settleDeadline) {
      await sleep(2000);
      fates = await malformedFates(database.url, accepted);
    }
    const readyAtEnd = (await fetch(`${system.apiUrl}/readyz`).catch(() => undefined))?.status === 200;
    const notReadyMs = readiness.stop();
    const effects = countSideEffects(fixture);
    const succeeded = await succeededSteps(database.url, batchId);
    const systemLog = systemLogFindings(readFileSync(logFile, "utf8"));
    const lostBatchMessages = await batchDeadLetters(database.url);
    const figures: Record<string, string | number> = {};
    for (const topic of allTopics) {
      const outcome = published.get(topic)!;
      figures[`${topic}: published / refused at publish`] = `${outcome.published} / ${outcome.refused}`;
    }
    for (const fate of fates) {
      figures[`${fate.queue}: routed / dead-lettered / ignored / still open`] =
        `${fate.routed} / ${fate.failed} / ${fate.handled} / ${fate.open}`;
    }
    const refusals = [...published.values()].flatMap((outcome) => [...outcome.refusalReasons]);
    if (refusals.length > 0)
      figures["publish refusals"] = refusals.map(([why, n]) => `${n}× ${why}`).join("; ");
    Object.assign(figures, {
      "malformed messages delivered more than once (retriable failure) / most deliveries": `${systemLog.redelivered} / ${systemLog.maxDeliveries}`,
      "handler crashes (error-level log lines)": systemLog.errors,
      "process exits / restarts": systemLog.starts - 1,
      "uncaught exceptions / unhandled rejections": systemLog.uncaught,
      "seconds /readyz was not ready": (notReadyMs / 1000).toFixed(1),
      "/readyz at the end": readyAtEnd ? 200 : "not ready",
      "batch status": status,
      "steps succeeded": `${succeeded} of ${fixture.expectedKeys.length}`,
      lost: effects.lost,
      duplicated: effects.duplicated,
      "batch messages dead-lettered": lostBatchMessages,
      "seconds publishing": floodSeconds.toFixed(1),
      "seconds from the first malformed message to batch end": batchSeconds.toFixed(1),
      seconds: ((Date.now() - started) / 1000).toFixed(1),
    });
    if (systemLog.errorSamples.length > 0) log(`error lines: ${systemLog.errorSamples.join(" | ")}`);
    const passed =
      status === "completed" &&
      succeeded === fixture.expectedKeys.length &&
      effects.lost === 0 &&
      effects.duplicated === 0 &&
      lostBatchMessages === 0 &&
      readyAtEnd &&
      systemLog.starts === 1 &&
      systemLog.uncaught === 0 &&
      fates.every((fate) => fate.open === 0);
    if (!passed) keep = true;
    return { passed, figures };
  } catch (error) {
    keep = true;
    throw error;
  } finally {
    readiness.stop();
    if (keep) log(`work dir kept: ${dir} (system.log)`);
    await runtime?.stop().catch(() => undefined);
    await db.destroy().catch(() => undefined);
    await system.stop();
    await database.dispose();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}
