import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  topics,
  workerResultMessageSchema,
  type WorkerJobMessage,
  type WorkerResultMessage,
} from "@matoolkit/domain";
import {
  createEmbeddedRuntime,
  createLogger,
  type MessageBus,
  type OutgoingMessage,
} from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { createDiagnosticFunctions } from "./functions/diagnostics.ts";
import { createFunctionRegistry } from "./functions/function-registry.ts";
import type { FunctionModule } from "./functions/worker-function.ts";
import { startWorkerService, type WorkerService } from "./worker-service.ts";

const logLines: string[] = [];
const logger = createLogger({
  level: "debug",
  name: "worker-test",
  destination: { write: (line: string) => logLines.push(line) },
});

let testDb: TestDatabase;
let runtime: Awaited<ReturnType<typeof createEmbeddedRuntime>>;
/** The real bus, recording what the workers publish (to see a republished result the bus dedupes). */
let bus: MessageBus;
const published: OutgoingMessage[] = [];
const results = new Map<string, WorkerResultMessage>();
const services: WorkerService[] = [];
/** Set by a test: each settlement waits for it before it reaches the real bus. */
let holdSettlement: ((jobId: string) => Promise<void>) | undefined;

beforeAll(async () => {
  testDb = await createTestDatabase();
  runtime = await createEmbeddedRuntime({ connectionString: testDb.url, db: testDb.db, logger });
  const real = runtime.bus;
  bus = {
    publish: async (message) => {
      published.push(message);
      await real.publish(message);
    },
    publishMany: async (messages) => {
      published.push(...messages);
      await real.publishMany(messages);
    },
    // The embedded bus's one-transaction end of a job (record, result, acknowledgement): the path
    // the worker takes in embedded mode, so the tests below exercise it.
    settleDelivery: async (settlement) => {
      await holdSettlement?.(String((settlement.delivery.body as { JobId?: unknown }).JobId));
      const settled = await real.settleDelivery!(settlement);
      if (settled) published.push(...settlement.messages);
      return settled;
    },
    subscribe: (subscription, handler) => real.subscribe(subscription, handler),
    declareSubscription: (subscription) => real.declareSubscription(subscription),
    deadLetters: (subscription) => real.deadLetters(subscription),
    stop: () => real.stop(),
  };
  await real.subscribe({ topic: topics.workerResults, name: "orchestrator" }, async (delivery) => {
    const result = workerResultMessageSchema.parse(delivery.body);
    results.set(result.JobId, result);
  });
});

afterAll(async () => {
  for (const service of services) await service.stop();
  await runtime?.stop();
  await testDb?.drop();
});

async function startWorker(
  workerId: string,
  modules: FunctionModule[],
  concurrency = 4,
  leaseSeconds?: number,
): Promise<WorkerService> {
  const registry = createFunctionRegistry(...modules);
  const service = await startWorkerService({
    bus,
    idempotency: runtime.idempotency,
    logger,
    workerId,
    concurrency,
    registry,
    jobTimeoutMs: 10_000,
    ...(leaseSeconds === undefined ? {} : { leaseSeconds }),
  });
  services.push(service);
  return service;
}

function job(
  JobId: string,
  WorkerId: string,
  FunctionName: string,
  Parameters: Record<string, unknown> = {},
): WorkerJobMessage {
  const CorrelationData = {
    StepExecutionId: 123,
    IsInitStep: false,
    RunbookName: "contoso",
    RunbookVersion: 1,
  };
  return { JobId, BatchId: 42, WorkerId, FunctionName, Parameters, CorrelationData };
}

function publishJob(body: WorkerJobMessage, messageId = `job:${body.JobId}`): Promise<void> {
  return runtime.bus.publish({
    id: messageId,
    topic: topics.workerJobs,
    body,
    properties: { WorkerId: body.WorkerId },
  });
}

async function waitFor<T>(probe: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A function recording which worker ran it. */
function recorder(workerId: string, runs: string[]): FunctionModule {
  return {
    "Record-Run": async (_params, context) => (
      runs.push(`${workerId}:${context.jobId}`),
      { complete: true, data: { workerId } }
    ),
  };
}

describe("worker service on the embedded runtime", () => {
  const runs: string[] = [];

  beforeAll(async () => {
    await startWorker("worker-01", [createDiagnosticFunctions(), recorder("worker-01", runs)]);
    await startWorker("worker-02", [recorder("worker-02", runs)]);
  });

  it("runs a job addressed to it and publishes the result on worker-results, keeping PII out of logs", async () => {
    await publishJob(
      job("step-1-attempt-1", "worker-01", "Test-Echo", { UserPrincipalName: "jdoe@contoso.com" }),
    );

    const result = await waitFor(() => results.get("step-1-attempt-1"), "the result");
    expect(result).toMatchObject({
      Status: "Success",
      Result: { complete: true, data: { UserPrincipalName: "jdoe@contoso.com" } },
    });
    const message = published.find((m) => (m.body as WorkerResultMessage).JobId === "step-1-attempt-1");
    expect(message).toMatchObject({ id: "result:step-1-attempt-1", topic: topics.workerResults });
    expect(logLines.some((line) => line.includes("step-1-attempt-1"))).toBe(true);
    expect(logLines.join("\n")).not.toContain("jdoe@contoso.com");
  });

  it("masks the job's param values in the logged error of a failed job (issue 25)", async () => {
    // A function's error may quote what it was given (here the whole message is a param).
    await publishJob(
      job("step-25-attempt-1", "worker-01", "Test-Fail", {
        Message: "refused Zq8-initial-77 as too weak",
        Secret: "Zq8-initial-77",
      }),
    );

    const result = await waitFor(() => results.get("step-25-attempt-1"), "the result");
    expect(result.Status).toBe("Failure");
    const finished = logLines.find(
      (line) => line.includes("step-25-attempt-1") && line.includes("job finished"),
    );
    expect(finished).toBeDefined();
    expect(finished).toContain('"errorMessage":"***"');
    expect(logLines.join("\n")).not.toContain("Zq8-initial-77");
  });

  it("leaves jobs addressed to another worker to that worker", async () => {
    await publishJob(job("step-2-attempt-1", "worker-02", "Record-Run"));

    const result = await waitFor(() => results.get("step-2-attempt-1"), "the result");
    expect(result.Result).toEqual({ complete: true, data: { workerId: "worker-02" } });
    expect(runs).toEqual(["worker-02:step-2-attempt-1"]);
  });

  it("dead-letters an invalid job at once with its reason, runs nothing, and keeps serving", async () => {
    await runtime.bus.publish({
      id: "job:garbage",
      topic: topics.workerJobs,
      body: { JobId: 7, WorkerId: "worker-01" },
      properties: { WorkerId: "worker-01" },
    });

    let letters = await runtime.bus.deadLetters({ topic: topics.workerJobs, name: "worker-worker-01" });
    for (let tries = 0; letters.length === 0 && tries < 400; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      letters = await runtime.bus.deadLetters({ topic: topics.workerJobs, name: "worker-worker-01" });
    }
    const [deadLetter] = letters;
    // Not retried: retrying cannot repair a malformed job.
    expect(deadLetter).toMatchObject({ id: "job:garbage", deliveryCount: 1 });
    expect(deadLetter?.error).toMatch(/^message\.invalid: Invalid worker job: JobId invalid_type/);
    expect(published.map((m) => m.id)).not.toContain("result:undefined");

    // The next, valid job on the same subscription still runs.
    await publishJob(job("step-9-attempt-1", "worker-01", "Test-Echo"), "job-after-garbage");
    await waitFor(() => results.get("step-9-attempt-1"), "the result of the next job");
  });
});

describe("worker service idempotency and concurrency", () => {
  it("runs a job delivered twice only once and answers both deliveries with the same result", async () => {
    let calls = 0;
    await startWorker("worker-dup", [
      { "Count-Calls": async () => ({ complete: true, data: { Call: ++calls } }) },
    ]);
    const body = job("step-3-attempt-1", "worker-dup", "Count-Calls");

    await publishJob(body, "job-message-1");
    await waitFor(() => results.get("step-3-attempt-1"), "the first result");
    await publishJob(body, "job-message-2");
    const answers = await waitFor(() => {
      const sent = published.filter((m) => m.id === "result:step-3-attempt-1");
      return sent.length >= 2 ? sent : undefined;
    }, "the second answer");

    expect(calls).toBe(1);
    expect(answers[1]?.body).toStrictEqual(answers[0]?.body);
    expect(results.get("step-3-attempt-1")?.Result).toEqual({ complete: true, data: { Call: 1 } });
  });

  it("never runs more jobs at once than its concurrency", async () => {
    const diagnostics = createDiagnosticFunctions();
    let inFlight = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    const sleepWithCount: FunctionModule = {
      "Test-Sleep": async (params, context) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        try {
          // Held until the test lets go, so the bound is observed without relying on timing.
          await new Promise<void>((resolve) => gates.push(resolve));
          return await diagnostics["Test-Sleep"]!(params, context);
        } finally {
          inFlight--;
        }
      },
    };
    await startWorker("worker-conc", [sleepWithCount], 2);
    const jobIds = ["step-4-attempt-1", "step-5-attempt-1", "step-6-attempt-1"];
    for (const id of jobIds) await publishJob(job(id, "worker-conc", "Test-Sleep", { Seconds: 0.01 }));

    await waitFor(() => inFlight === 2, "two jobs running");
    // Give the third job every chance to start if the bound were broken.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(inFlight).toBe(2);
    await waitFor(() => {
      gates.shift()?.();
      return jobIds.every((id) => results.has(id));
    }, "all three results");

    expect(peak).toBe(2);
    expect(jobIds.map((id) => results.get(id)?.Status)).toEqual(["Success", "Success", "Success"]);
  });

  it("frees a function's slot when it returns, and stops only once its outcome is published", async () => {
    const started: string[] = [];
    let openGate = (): void => undefined;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const settling: string[] = [];
    holdSettlement = async (jobId) => {
      if (jobId !== "step-7-attempt-1") return;
      settling.push(jobId);
      await gate;
    };
    try {
      const worker = await startWorker(
        "worker-slot",
        [{ "Record-Start": async (_params, context) => (started.push(context.jobId), { complete: true }) }],
        1,
      );
      await publishJob(job("step-7-attempt-1", "worker-slot", "Record-Start"));
      await waitFor(() => settling.length === 1, "the first job's outcome on its way to the bus");
      // Its outcome is still unrecorded (settlement held): the one slot runs the next function.
      await publishJob(job("step-8-attempt-1", "worker-slot", "Record-Start"));
      await waitFor(() => results.has("step-8-attempt-1"), "the second job's result");
      expect(started).toEqual(["step-7-attempt-1", "step-8-attempt-1"]);
      expect(results.has("step-7-attempt-1")).toBe(false);

      let stopped = false;
      const stopping = worker.stop().then(() => (stopped = true));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(stopped).toBe(false);
      openGate();
      await stopping;
      await waitFor(() => results.get("step-7-attempt-1"), "the first job's result");
      expect(results.get("step-7-attempt-1")?.Status).toBe("Success");
    } finally {
      holdSettlement = undefined;
      openGate();
    }
  });

  it("answers a copy delivered while the job's outcome is being recorded once it is recorded, not after the lease", async () => {
    let calls = 0;
    let openGate = (): void => undefined;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let held = false;
    holdSettlement = async (jobId) => {
      if (jobId !== "step-10-attempt-1" || held) return;
      held = true;
      await gate;
    };
    try {
      await startWorker(
        "worker-copy",
        [{ "Count-Calls": async () => ({ complete: true, data: { Call: ++calls } }) }],
        2,
      );
      const body = job("step-10-attempt-1", "worker-copy", "Count-Calls");
      await publishJob(body, "copy-message-1");
      await waitFor(() => held, "the job's outcome on its way to the bus");
      // The copy finds the claim in progress (the owner is recording), with 30 s of lease left.
      await publishJob(body, "copy-message-2");
      await new Promise((resolve) => setTimeout(resolve, 300));
      openGate();
      const started = Date.now();
      const answers = await waitFor(
        () => {
          const sent = published.filter((m) => m.id === "result:step-10-attempt-1");
          return sent.length >= 2 ? sent : undefined;
        },
        "the copy's answer",
        10_000,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(calls).toBe(1);
      expect(answers[1]?.body).toStrictEqual(answers[0]?.body);
    } finally {
      holdSettlement = undefined;
      openGate();
    }
  });

  it("holds the claim of a job waiting for a function slot: a copy delivered after a lease does not take it over", async () => {
    const calls = new Map<string, number>();
    let openGate = (): void => undefined;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    try {
      await startWorker(
        "worker-waiting",
        [
          {
            "Hold-Slot": async (_params, context) => {
              calls.set(context.jobId, (calls.get(context.jobId) ?? 0) + 1);
              await gate;
              return { complete: true };
            },
          },
        ],
        2,
        1,
      );
      // Both slots held by functions waiting on the gate; the third job is claimed and waits.
      await publishJob(job("step-11-attempt-1", "worker-waiting", "Hold-Slot"));
      await publishJob(job("step-12-attempt-1", "worker-waiting", "Hold-Slot"));
      await waitFor(() => calls.size === 2, "both slots busy");
      const waiting = job("step-13-attempt-1", "worker-waiting", "Hold-Slot");
      await publishJob(waiting, "waiting-message-1");
      // Past its 1 s lease (and the margin a copy allows for clocks): renewed, not lapsed, so
      // the copy finds it in progress, waits a lease, and leaves it to its owner.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await publishJob(waiting, "waiting-message-2");
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(results.has("step-13-attempt-1")).toBe(false);
      openGate();
      const result = await waitFor(() => results.get("step-13-attempt-1"), "the waiting job's result");
      expect(result.Status).toBe("Success");
      await waitFor(() => results.has("step-12-attempt-1"), "the other jobs' results");
      expect(calls.get("step-13-attempt-1")).toBe(1);
      expect(logLines.some((line) => line.includes("step-13") && line.includes("worker.lost"))).toBe(false);
    } finally {
      openGate();
    }
  });
});
