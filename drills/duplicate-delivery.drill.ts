/**
 * Duplicate delivery (issue 11): a batch of 200 members × 3 steps runs on the real orchestrator
 * and worker over the real embedded bus, except that EVERY delivery on every subscription
 * (orchestrator events, worker jobs, worker results) reaches its handler twice, half at the same
 * time, half one after the other (drills/support/duplicate-bus.ts). The steps call a function
 * that is NOT safe to repeat and records its effect per job id and per (member, step). Target: 0
 * duplicated effects, 0 lost, every step succeeded. In-process (the bus must be decorated), on
 * embedded PostgreSQL in a temp directory, or on a fresh database of DATABASE_URL's server.
 */
import { mkdtempSync, rmSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { topics } from "@matoolkit/domain";
import { startOrchestratorService, type OrchestratorService } from "@matoolkit/orchestrator";
import { bootPlatform, platformConfigFromEnv, type Platform } from "@matoolkit/platform";
import { createFunctionRegistry, startWorkerService, type WorkerService } from "@matoolkit/worker";
import type { DrillContext, DrillOutcome } from "./drill.ts";
import { duplicateRunbook, seedDueBatch } from "./support/duplicate-batch.ts";
import { deliveringEverythingTwice, type DoubledDeliveries } from "./support/duplicate-bus.ts";
import { countAbove, effectLedger } from "./support/duplicate-effects.ts";
import { serverDrillDatabase, type DrillDatabase } from "./support/outage-database.ts";
import { freePort } from "./support/outage-readiness.ts";

// A drill is an entry point (`npm run drill`): it reads its own settings.
// eslint-disable-next-line no-restricted-properties
const env = process.env;
const MEMBERS = Number(env.MATOOLKIT_DRILL_MEMBERS ?? 200);
const STEPS = ["one", "two", "three"];
/**
 * A copy of a job arriving while the first still runs waits out the first's lease before it
 * looks again; a short lease (the configurable minimum is 3 s) keeps the drill to a minute.
 */
const LEASE_SECONDS = Number(env.MATOOLKIT_DRILL_LEASE_SECONDS ?? 5);
const COMPLETION_TIMEOUT_MS = 600_000;

export const description =
  "every message of a 200 × 3 batch delivered twice: 0 duplicated side effects, 0 lost";

export async function run({ log }: DrillContext): Promise<DrillOutcome> {
  const started = Date.now();
  const dir = mkdtempSync(path.join(tmpdir(), "matoolkit-drill-duplicate-"));
  chmodSync(dir, 0o755); // as root, the embedded server runs as `postgres` and must enter it
  const serverUrl = env.DATABASE_URL;
  const server: DrillDatabase | undefined =
    serverUrl !== undefined && serverUrl !== "" ? await serverDrillDatabase(serverUrl) : undefined;
  const platform: Platform = await bootPlatform(
    platformConfigFromEnv({
      DATABASE_URL: server?.url,
      // The drill's own fresh database (or the embedded one): migrated here, as all-in-one does.
      MATOOLKIT_MIGRATE_ON_START: "true",
      MATOOLKIT_DATA_DIR: path.join(dir, "data"),
      MATOOLKIT_EMBEDDED_PG_PORT: String(await freePort()),
      LOG_LEVEL: env.LOG_LEVEL ?? "error",
    }),
    "duplicate-drill",
  );
  log(
    `database: ${server === undefined ? "embedded" : "server"}; ${MEMBERS} members × ${STEPS.length} steps`,
  );
  const doubled: DoubledDeliveries = { concurrent: 0, sequential: 0, byTopic: new Map() };
  const bus = deliveringEverythingTwice(platform.bus, doubled);
  const ledger = effectLedger();
  let orchestrator: OrchestratorService | undefined;
  let worker: WorkerService | undefined;
  try {
    orchestrator = await startOrchestratorService({
      db: platform.db,
      bus,
      logger: platform.logger,
      workflows: { engine: platform.workflows, recheckSeconds: 30, reconcileSeconds: 30 },
    });
    worker = await startWorkerService({
      bus,
      idempotency: platform.idempotency,
      logger: platform.logger,
      workerId: "worker-01",
      concurrency: 32,
      jobTimeoutMs: 60_000,
      leaseSeconds: LEASE_SECONDS,
      registry: createFunctionRegistry(ledger.module),
    });
    await platform.start();
    await orchestrator.startWorkflows();

    const memberKeys = Array.from({ length: MEMBERS }, (_, i) => `twice${i}@contoso.test`);
    const runStarted = Date.now();
    const batchId = await seedDueBatch(platform.db, {
      name: "duplicate-drill",
      yaml: duplicateRunbook("duplicate-drill", STEPS),
      memberKeys,
    });
    const status = await waitForEnd(platform, batchId, log);
    const seconds = (Date.now() - runStarted) / 1000;
    // Copies still in flight (a late redelivery) could yet add an effect: let them land.
    await sleep(LEASE_SECONDS * 1000 + 2000);

    const steps = await platform.db
      .selectFrom("stepExecutions")
      .select(["status"])
      .where("batchId", "=", batchId)
      .execute();
    const succeeded = steps.filter((step) => step.status === "succeeded").length;
    const expected = MEMBERS * STEPS.length;
    const lost = memberKeys
      .flatMap((member) => STEPS.map((step) => `${member} ${step}`))
      .filter((key) => !ledger.byStep.has(key)).length;
    const duplicatedByJob = countAbove(ledger.byJob, 1);
    const duplicatedByStep = countAbove(ledger.byStep, 1);
    const figures = {
      "deliveries handed to their handler twice": doubled.concurrent + doubled.sequential,
      "… at the same time / one after the other": `${doubled.concurrent} / ${doubled.sequential}`,
      "… per topic (events / jobs / results)": [
        topics.orchestratorEvents,
        topics.workerJobs,
        topics.workerResults,
      ]
        .map((topic) => doubled.byTopic.get(topic) ?? 0)
        .join(" / "),
      "batch status": status,
      "steps succeeded": `${succeeded} of ${expected}`,
      "jobs run (distinct job ids)": ledger.byJob.size,
      "duplicated side effects per job id": duplicatedByJob,
      "duplicated side effects per step": duplicatedByStep,
      lost,
      "seconds to batch end": seconds.toFixed(1),
      seconds: ((Date.now() - started) / 1000).toFixed(1),
    };
    const passed =
      status === "completed" &&
      succeeded === expected &&
      lost === 0 &&
      duplicatedByJob === 0 &&
      duplicatedByStep === 0 &&
      doubled.concurrent + doubled.sequential > 0;
    return { passed, figures };
  } finally {
    await worker?.stop().catch(() => undefined);
    await orchestrator?.stop().catch(() => undefined);
    await platform.stop().catch(() => undefined);
    await server?.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function waitForEnd(platform: Platform, batchId: number, log: (line: string) => void): Promise<string> {
  const deadline = Date.now() + COMPLETION_TIMEOUT_MS;
  let status = "";
  let lastReport = Date.now();
  while (Date.now() < deadline) {
    status = (
      await platform.db
        .selectFrom("batches")
        .select("status")
        .where("id", "=", batchId)
        .executeTakeFirstOrThrow()
    ).status;
    if (status === "completed" || status === "failed") return status;
    if (Date.now() - lastReport > 15_000) {
      lastReport = Date.now();
      log(
        `batch ${batchId} ${status} after ${((Date.now() - deadline + COMPLETION_TIMEOUT_MS) / 1000).toFixed(0)} s`,
      );
    }
    await sleep(250);
  }
  return status;
}
