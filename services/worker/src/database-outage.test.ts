import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { topics, type WorkerJobMessage, type WorkerResultMessage } from "@matoolkit/domain";
import {
  createLogger,
  createPostgresIdempotencyStore,
  DeliveryDeferredError,
  type MessageBus,
  type OutgoingMessage,
} from "@matoolkit/runtime";
import { createDb, type Db } from "@matoolkit/db";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { startDatabaseOutageProxy, type DatabaseOutageProxy } from "../test/database-outage.test-support.ts";
import { createFunctionRegistry } from "./functions/function-registry.ts";
import { safeToRepeat } from "./functions/worker-function.ts";
import { handleJobDelivery, type JobDeliveryDeps } from "./handle-job-delivery.ts";

/**
 * Issue 11, database-outage drill: a job finished while PostgreSQL was down could not be recorded
 * as completed; its result was published anyway, the claim stayed in progress, and once its lease
 * ran out the next delivery ran the job again (1 duplicate in 600). The worker must record the
 * completion before settling the delivery, holding the claim's lease meanwhile.
 */
const logger = createLogger({ level: "silent", name: "worker-outage-test" });
const LEASE_SECONDS = 1;
let database: TestDatabase;
let proxy: DatabaseOutageProxy;
/** The worker's own pool, through the proxy: the one the outage cuts. */
let workerDb: Db;
const runs: string[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The database goes away while the function runs and comes back `outageMs` later. */
function outageDuringRun(outageMs: number): void {
  proxy.cut();
  setTimeout(() => proxy.restore(), outageMs);
}

const registry = createFunctionRegistry({
  /** Safe to repeat, as the drill's functions: a lost claim is simply run again (the duplicate). */
  "Read-Mailbox": safeToRepeat(async (params, context) => {
    runs.push(context.jobId);
    outageDuringRun(Number(params.OutageMs));
    // Outlasts the lease while renewals fail: the function must not be aborted for it.
    await sleep(Number(params.RunMs));
    return { complete: true, data: { read: 42 } };
  }),
  /** jsonb cannot hold U+0000: the store refuses the outcome itself, whatever the retries. */
  "Return-Nul": async (_params, context) => {
    runs.push(context.jobId);
    return { complete: true, data: { note: "a\u0000b" } };
  },
});

beforeAll(async () => {
  database = await createTestDatabase();
  proxy = await startDatabaseOutageProxy(database.url);
  workerDb = createDb({ connectionString: proxy.url, maxConnections: 3, applicationName: "outage-test" });
});
afterAll(async () => {
  await workerDb?.destroy();
  await proxy?.close();
  await database?.drop();
});

let sequence = 0;
function job(FunctionName: string, Parameters: Record<string, unknown> = {}): WorkerJobMessage {
  sequence += 1;
  return {
    JobId: `outage-${sequence}-${Date.now()}`,
    BatchId: 11,
    WorkerId: "worker-01",
    FunctionName,
    Parameters,
    CorrelationData: { StepExecutionId: sequence, IsInitStep: false, RunbookName: "r", RunbookVersion: 1 },
  };
}

/** A worker process on `db`, publishing to a recording bus (the handler only publishes). */
function worker(owner: string, db: Db, stopping?: AbortSignal) {
  const published: WorkerResultMessage[] = [];
  const bus = {
    publish: async (message: OutgoingMessage) => {
      published.push(message.body as WorkerResultMessage);
    },
  } as unknown as MessageBus;
  const deps: JobDeliveryDeps = {
    bus,
    idempotency: createPostgresIdempotencyStore(db),
    logger,
    workerId: "worker-01",
    registry,
    execute: { timeoutMs: 10_000 },
    lease: { leaseSeconds: LEASE_SECONDS, owner },
    stopping,
  };
  const deliver = (body: WorkerJobMessage) =>
    handleJobDelivery(
      { id: `job:${body.JobId}`, topic: topics.workerJobs, body, properties: {}, deliveryCount: 1 },
      deps,
    );
  return { published, deliver };
}

async function storedClaim(jobId: string): Promise<{ state: string; value: unknown } | undefined> {
  const result = await sql<{ state: string; value: unknown }>`
    SELECT state, value FROM idempotency_keys WHERE key = ${`worker-job:${jobId}`}`.execute(database.db);
  return result.rows[0];
}

describe("a job that finishes while the database is down", () => {
  it("runs once: its completion is recorded once the database is back, then published, and a redelivery republishes it", async () => {
    // Down for nearly two leases: the function (1.2 s) outlives its lease with every renewal
    // failing, and finishes before the database is back.
    const body = job("Read-Mailbox", { OutageMs: 1800, RunMs: 1200 });
    const first = worker("first", workerDb);

    await first.deliver(body);

    expect(first.published).toEqual([expect.objectContaining({ JobId: body.JobId, Status: "Success" })]);
    expect(await storedClaim(body.JobId)).toEqual({ state: "completed", value: first.published[0] });
    // The bus redelivers the job (its settlement was lost in the outage), here to another worker
    // once the first one's handler is done: it must find the job completed, not a lapsed claim.
    const second = worker("second", database.db);
    await second.deliver(body);
    expect(second.published).toEqual(first.published);
    expect(runs.filter((run) => run === body.JobId)).toHaveLength(1);
  });

  it("is left unsettled, unpublished and claimed when the worker stops before the database is back", async () => {
    const body = job("Read-Mailbox", { OutageMs: 1500, RunMs: 100 });
    const stopping = new AbortController();
    const first = worker("stopping", workerDb, stopping.signal);

    const delivered = first.deliver(body);
    await sleep(500); // the function has finished; the record is being retried
    stopping.abort();

    await expect(delivered).rejects.toBeInstanceOf(DeliveryDeferredError);
    expect(first.published).toEqual([]);
    await sleep(1200); // the database is back
    expect(await storedClaim(body.JobId)).toMatchObject({ state: "in_progress" });
  });
});

describe("an outcome the store refuses (not an outage)", () => {
  it("is published without retrying forever", async () => {
    const body = job("Return-Nul");
    const healthy = worker("healthy", database.db);

    await healthy.deliver(body);

    expect(healthy.published).toEqual([expect.objectContaining({ JobId: body.JobId })]);
    expect(runs.filter((run) => run === body.JobId)).toHaveLength(1);
    // Refused indeed (SQLSTATE 22P05), not stored: the claim is as the run left it.
    expect(await storedClaim(body.JobId)).toMatchObject({ state: "in_progress" });
  });
});
