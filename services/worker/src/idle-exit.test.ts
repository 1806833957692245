import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { topics, type WorkerJobMessage, type WorkerResultMessage } from "@matoolkit/domain";
import {
  createLogger,
  type ClaimOutcome,
  type DeliveryHandler,
  type IdempotencyStore,
  type MessageBus,
  type OutgoingMessage,
} from "@matoolkit/runtime";
import { createDiagnosticFunctions } from "./functions/diagnostics.ts";
import { createFunctionRegistry } from "./functions/function-registry.ts";
import type { WorkerFunctionContext } from "./functions/worker-function.ts";
import { createIdleMonitor } from "./idle-exit.ts";
import type { TenantClients } from "./tenant/tenant-clients.ts";
import { startWorkerService } from "./worker-service.ts";

describe("createIdleMonitor (fake timers)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A job whose end the test decides. */
  function gate(): { promise: Promise<void>; open: () => void } {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    return { promise, open };
  }

  it("calls onIdle once, idleMs after start-up when nothing arrives", async () => {
    const onIdle = vi.fn();
    createIdleMonitor({ idleMs: 300_000, onIdle });
    await vi.advanceTimersByTimeAsync(299_999);
    expect(onIdle).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(onIdle).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(10 * 300_000);
    expect(onIdle).toHaveBeenCalledTimes(1);
  });

  it("restarts the clock at every delivery and at the end of every job", async () => {
    const onIdle = vi.fn();
    const monitor = createIdleMonitor({ idleMs: 1_000, onIdle });
    await vi.advanceTimersByTimeAsync(900);
    await monitor.track(async () => {});
    await vi.advanceTimersByTimeAsync(900);
    expect(onIdle).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(100);
    expect(onIdle).toHaveBeenCalledTimes(1);
  });

  it("never fires while a job runs, however long, and counts from its end", async () => {
    const onIdle = vi.fn();
    const monitor = createIdleMonitor({ idleMs: 1_000, onIdle });
    const job = gate();
    const running = monitor.track(() => job.promise);
    expect(monitor.busy()).toBe(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(onIdle).not.toHaveBeenCalled();

    job.open();
    await running;
    expect(monitor.busy()).toBe(0);
    await vi.advanceTimersByTimeAsync(999);
    expect(onIdle).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(onIdle).toHaveBeenCalledTimes(1);
  });

  it("waits for the last of overlapping jobs, and counts a failed job's end too", async () => {
    const onIdle = vi.fn();
    const monitor = createIdleMonitor({ idleMs: 1_000, onIdle });
    const first = gate();
    const a = monitor.track(() => first.promise);
    const b = monitor.track(async () => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      throw new Error("job failed");
    });
    const bFailed = expect(b).rejects.toThrow("job failed");
    await vi.advanceTimersByTimeAsync(500);
    await bFailed;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(onIdle).not.toHaveBeenCalled();
    first.open();
    await a;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(onIdle).toHaveBeenCalledTimes(1);
  });

  it("stop() cancels it", async () => {
    const onIdle = vi.fn();
    createIdleMonitor({ idleMs: 1_000, onIdle }).stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(onIdle).not.toHaveBeenCalled();
  });

  it("refuses a non-positive timeout", () => {
    expect(() => createIdleMonitor({ idleMs: 0, onIdle: () => {} })).toThrow(RangeError);
  });
});

describe("startWorkerService with idleExitMs (real timers, in-memory bus)", () => {
  /** Just enough of the ports for one worker: the handler is called directly, as a bus would. */
  function fakePorts() {
    let handler: DeliveryHandler | undefined;
    const published: OutgoingMessage[] = [];
    const claims = new Map<string, ClaimOutcome>();
    const bus: MessageBus = {
      publish: async (message) => {
        published.push(message);
      },
      publishMany: async (messages) => {
        published.push(...messages);
      },
      subscribe: async (_subscription, h) => {
        handler = h;
      },
      declareSubscription: async () => {},
      deadLetters: async () => [],
      stop: async () => {},
    };
    const idempotency: IdempotencyStore = {
      claim: async (key, { owner, leaseSeconds }) => {
        const existing = claims.get(key);
        if (existing) return existing;
        const leaseExpiresAt = new Date(Date.now() + leaseSeconds * 1000);
        claims.set(key, { status: "in_progress", claimedAt: new Date(), owner, leaseExpiresAt });
        return { status: "claimed" };
      },
      renew: async (key, owner) => {
        const existing = claims.get(key);
        return existing?.status === "in_progress" && existing.owner === owner;
      },
      complete: async (key, value) => {
        claims.set(key, { status: "completed", value });
      },
      release: async (key) => {
        claims.delete(key);
      },
    };
    let seq = 0;
    const deliver = (FunctionName: string, Parameters: Record<string, unknown> = {}) => {
      if (!handler) throw new Error("not subscribed");
      const body: WorkerJobMessage = {
        JobId: `step-${++seq}`,
        BatchId: 1,
        WorkerId: "worker-idle",
        FunctionName,
        Parameters,
        CorrelationData: { StepExecutionId: seq, IsInitStep: false, RunbookName: "r", RunbookVersion: 1 },
      };
      return handler({ id: body.JobId, topic: topics.workerJobs, body, properties: {}, deliveryCount: 1 });
    };
    return { bus, idempotency, published, deliver };
  }

  const logger = createLogger({ level: "silent", name: "idle-test" });

  it("exits idle only after the job that outlasted the timeout, and passes the tenant clients to functions", async () => {
    const ports = fakePorts();
    const reached: string[] = [];
    const tenant: TenantClients = {
      graph: {
        serviceRoot: "https://graph.microsoft.com",
        request: async (request) => (reached.push(request.path), {}) as never,
      },
      exchange: { invoke: async (cmdlet) => (reached.push(cmdlet), { value: [], warnings: [] }) },
    };
    let seenTenant: TenantClients | undefined;
    const registry = createFunctionRegistry(createDiagnosticFunctions(), {
      "Get-TenantSeen": async (_params, context: WorkerFunctionContext) => {
        seenTenant = context.tenant;
        return true;
      },
    });
    let idleAt: number | undefined;
    const worker = await startWorkerService({
      bus: ports.bus,
      idempotency: ports.idempotency,
      logger,
      workerId: "worker-idle",
      concurrency: 2,
      registry,
      jobTimeoutMs: 5_000,
      tenant,
      idleExitMs: 150,
      onIdle: () => {
        idleAt = Date.now();
      },
    });
    try {
      await ports.deliver("Get-TenantSeen");
      // The worker's own clients, behind its pacing (pacing/api-pacer.ts): same root, same ports.
      expect(seenTenant?.graph.serviceRoot).toBe(tenant.graph.serviceRoot);
      await seenTenant?.graph.request({ method: "GET", path: "/organization" }, AbortSignal.timeout(1_000));
      await seenTenant?.exchange.invoke("Get-OrganizationConfig", {}, AbortSignal.timeout(1_000));
      expect(reached).toEqual(["/organization", "Get-OrganizationConfig"]);

      // A 0.4 s job with a 0.15 s idle timeout.
      const started = Date.now();
      await ports.deliver("Test-Sleep", { Seconds: 0.4 });
      const ended = Date.now();
      expect(ended - started).toBeGreaterThanOrEqual(390);
      expect(idleAt).toBeUndefined();

      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(idleAt).toBeDefined();
      expect(idleAt! - ended).toBeGreaterThanOrEqual(140);
      const results = ports.published.map((m) => m.body as WorkerResultMessage);
      expect(results.map((r) => r.Status)).toEqual(["Success", "Success"]);
    } finally {
      await worker.stop();
    }
  });

  it("never calls onIdle without idleExitMs, nor after stop()", async () => {
    const onIdle = vi.fn();
    const quiet = fakePorts();
    const never = await startWorkerService({
      bus: quiet.bus,
      idempotency: quiet.idempotency,
      logger,
      workerId: "worker-idle",
      concurrency: 1,
      registry: createFunctionRegistry(createDiagnosticFunctions()),
      jobTimeoutMs: 1_000,
      onIdle,
    });
    const stopped = fakePorts();
    const early = await startWorkerService({
      bus: stopped.bus,
      idempotency: stopped.idempotency,
      logger,
      workerId: "worker-idle",
      concurrency: 1,
      registry: createFunctionRegistry(createDiagnosticFunctions()),
      jobTimeoutMs: 1_000,
      idleExitMs: 50,
      onIdle,
    });
    await early.stop();
    await new Promise((resolve) => setTimeout(resolve, 150));
    await never.stop();
    expect(onIdle).not.toHaveBeenCalled();
  });
});
