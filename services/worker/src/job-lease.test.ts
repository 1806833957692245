import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reasonCodes, topics, type WorkerJobMessage, type WorkerResultMessage } from "@matoolkit/domain";
import {
  createLogger,
  createPostgresIdempotencyStore,
  type IdempotencyStore,
  type MessageBus,
  type OutgoingMessage,
} from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { createFunctionRegistry } from "./functions/function-registry.ts";
import { safeToRepeat } from "./functions/worker-function.ts";
import { handleJobDelivery, JOB_MEMORY_SECONDS, type JobDeliveryDeps } from "./handle-job-delivery.ts";

/**
 * Issue 11: a worker killed mid-job leaves its claim behind. The next delivery of that job must
 * not wait for the stuck-step timeout (1 h): once the dead owner's lease runs out, the job is
 * reported as `worker.lost` (or run again when its function is safe to repeat). A live owner's
 * claim is left alone, and a long job keeps its claim by renewing the lease.
 */
const logger = createLogger({ level: "silent", name: "job-lease-test" });
let database: TestDatabase;
let store: IdempotencyStore;
const runs: string[] = [];

const registry = createFunctionRegistry({
  /** Not safe to repeat: a second run would repeat its side effect (recorded in `runs`). */
  "Send-Welcome": async (_params, context) => {
    runs.push(`send:${context.jobId}`);
    return { complete: true, data: { sent: true } };
  },
  "Read-Mailbox": safeToRepeat(async (_params, context) => {
    runs.push(`read:${context.jobId}`);
    return { complete: true, data: { read: true } };
  }),
  /** Runs `Seconds`, honouring the abort signal. */
  "Sleep-Then-Record": async (params, context) => {
    await new Promise((resolve) => setTimeout(resolve, Number(params.Seconds) * 1000));
    runs.push(`slept:${context.jobId}`);
    return { complete: true, data: {} };
  },
});

beforeAll(async () => {
  database = await createTestDatabase();
  store = createPostgresIdempotencyStore(database.db);
});
afterAll(async () => {
  await database?.drop();
});

let sequence = 0;
function job(FunctionName: string, Parameters: Record<string, unknown> = {}): WorkerJobMessage {
  sequence += 1;
  return {
    JobId: `step-${sequence}-attempt-1-${Date.now()}`,
    BatchId: 7,
    WorkerId: "worker-01",
    FunctionName,
    Parameters,
    CorrelationData: { StepExecutionId: sequence, IsInitStep: false, RunbookName: "r", RunbookVersion: 1 },
  };
}

/** A worker process: its own owner name and a recording bus (only `publish` is used by the handler). */
function worker(owner: string, leaseSeconds = 1) {
  const published: WorkerResultMessage[] = [];
  const bus = {
    publish: async (message: OutgoingMessage) => {
      published.push(message.body as WorkerResultMessage);
    },
  } as unknown as MessageBus;
  const deps: JobDeliveryDeps = {
    bus,
    idempotency: store,
    logger,
    workerId: "worker-01",
    registry,
    execute: { timeoutMs: 10_000 },
    lease: { leaseSeconds, owner },
  };
  const deliver = (body: WorkerJobMessage) =>
    handleJobDelivery(
      { id: `job:${body.JobId}`, topic: topics.workerJobs, body, properties: {}, deliveryCount: 2 },
      deps,
    );
  return { published, deliver };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** What a worker killed mid-job leaves: a claim whose lease is not renewed any more. */
async function claimOfDeadWorker(body: WorkerJobMessage): Promise<void> {
  await store.claim(`worker-job:${body.JobId}`, {
    ttlSeconds: JOB_MEMORY_SECONDS,
    leaseSeconds: 1,
    owner: "killed",
  });
  await sleep(1100);
}

describe("a job whose worker died mid-job (lease expired)", () => {
  it("is reported failed as worker.lost, without running a function that is not safe to repeat", async () => {
    const body = job("Send-Welcome");
    await claimOfDeadWorker(body);
    const restarted = worker("restarted");

    await restarted.deliver(body);

    expect(runs).not.toContain(`send:${body.JobId}`);
    expect(restarted.published).toHaveLength(1);
    expect(restarted.published[0]).toMatchObject({
      JobId: body.JobId,
      Status: "Failure",
      Error: { Type: reasonCodes.workerLost },
      CorrelationData: body.CorrelationData,
    });
    // Recorded: a further redelivery republishes the same outcome and still runs nothing.
    await restarted.deliver(body);
    expect(restarted.published[1]).toEqual(restarted.published[0]);
    expect(runs).not.toContain(`send:${body.JobId}`);
  });

  it("is run again at once when its function is declared safe to repeat", async () => {
    const body = job("Read-Mailbox");
    await claimOfDeadWorker(body);
    const restarted = worker("restarted");

    await restarted.deliver(body);

    expect(runs.filter((run) => run === `read:${body.JobId}`)).toHaveLength(1);
    expect(restarted.published).toEqual([expect.objectContaining({ JobId: body.JobId, Status: "Success" })]);
  });
});

describe("a job whose worker is alive", () => {
  it("is not taken over while its owner renews the lease, and its outcome is republished once recorded", async () => {
    const body = job("Send-Welcome");
    const key = `worker-job:${body.JobId}`;
    await store.claim(key, { ttlSeconds: JOB_MEMORY_SECONDS, leaseSeconds: 1, owner: "alive" });
    const renewing = setInterval(() => void store.renew(key, "alive", 1), 250);
    const other = worker("other");
    try {
      // The duplicate delivery waits the lease out (1 s), sees it renewed, and leaves the job alone.
      await other.deliver(body);
    } finally {
      clearInterval(renewing);
    }
    expect(runs).not.toContain(`send:${body.JobId}`);
    expect(other.published).toEqual([]);

    const outcome = {
      JobId: body.JobId,
      Status: "Success",
      Result: { complete: true },
      CorrelationData: body.CorrelationData,
    };
    await store.complete(key, outcome, JOB_MEMORY_SECONDS);
    await other.deliver(body);
    expect(other.published).toEqual([outcome]);
  });

  it("keeps the claim of a job that outlasts its lease by renewing it: a duplicate delivery does not run it again", async () => {
    const body = job("Sleep-Then-Record", { Seconds: 2.5 });
    const first = worker("first");
    const second = worker("second");

    const running = first.deliver(body);
    await sleep(1500); // past the first lease of 1 s: only renewals keep the claim
    await second.deliver(body);
    await running;

    expect(runs.filter((run) => run === `slept:${body.JobId}`)).toHaveLength(1);
    expect(first.published).toEqual([expect.objectContaining({ JobId: body.JobId, Status: "Success" })]);
    // The duplicate either found it still running (published nothing) or finished (republished it).
    for (const result of second.published) expect(result).toEqual(first.published[0]);
  });
});
