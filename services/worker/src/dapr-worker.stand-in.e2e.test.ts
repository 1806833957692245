import { freePort } from "@matoolkit/dapr-harness/free-port";
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { topics, workerResultMessageSchema, type WorkerJobMessage } from "@matoolkit/domain";
import {
  createStandInBroker,
  startStandInSidecar,
  type StandInBroker,
  type StandInSidecar,
} from "@matoolkit/dapr-stand-in";
import {
  bootOptionsFor,
  bootRuntimePlatform,
  platformConfigFromEnv,
  startServices,
  type ComposedServices,
} from "@matoolkit/platform";
import { afterEach, describe, expect, it, vi } from "vitest";
import { workerPart } from "./compose.ts";

/**
 * 000: the worker has no SQL access. On Dapr (MATOOLKIT_RUNTIME=dapr or aca) it runs on the bus
 * and the state store alone: no DATABASE_URL, no embedded PostgreSQL, no connection opened.
 */
const repo = fileURLToPath(new URL("../../../", import.meta.url));

let broker: StandInBroker | undefined;
let sidecar: StandInSidecar | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await sidecar?.stop();
  broker?.close();
});

async function openSidecar(): Promise<{ env: Record<string, string> }> {
  broker = createStandInBroker({ redeliveryDelayMs: 50, maxDeliveryAttempts: 20 });
  const appPort = await freePort();
  sidecar = await startStandInSidecar({
    broker,
    appId: "matoolkit-worker",
    appUrl: `http://127.0.0.1:${appPort}`,
    log: () => undefined,
  });
  return { env: { DAPR_HTTP_ENDPOINT: sidecar.url, MATOOLKIT_DAPR_APP_PORT: String(appPort) } };
}

function job(workerId: string): WorkerJobMessage {
  return {
    JobId: `job-${randomUUID()}`,
    BatchId: 1,
    WorkerId: workerId,
    FunctionName: "Test-Echo",
    Parameters: { Greeting: "hello" },
    CorrelationData: { StepExecutionId: 7, IsInitStep: false, RunbookName: "dapr-worker", RunbookVersion: 1 },
  };
}

/** Publishes a job as the orchestrator's relay would, through a sidecar of its own. */
async function sendJob(body: WorkerJobMessage): Promise<void> {
  const publisher = await startStandInSidecar({ broker: broker!, appId: "publisher", log: () => undefined });
  cleanups.push(() => publisher.stop());
  await publisher.ready();
  const response = await fetch(
    `${publisher.url}/v1.0/publish/matoolkit-pubsub/${topics.workerJobs}?metadata.cloudevent.id=job:${body.JobId}`,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
  );
  expect(response.status).toBe(204);
}

async function resultOf(jobId: string) {
  return vi.waitFor(
    () => {
      const result = broker!
        .messages(topics.workerResults)
        .map((message) => workerResultMessageSchema.safeParse(message.cloudEvent.data))
        .find((parsed) => parsed.success && parsed.data.JobId === jobId);
      expect(result).toBeDefined();
      return result!.data!;
    },
    { timeout: 20_000, interval: 50 },
  );
}

describe("the worker on Dapr", () => {
  it.each([
    ["dapr", {}],
    // A DATABASE_URL left in the environment is ignored (logged), not connected to.
    ["aca", { DATABASE_URL: "postgres://nobody@127.0.0.1:9/unreachable" }],
  ])(
    "MATOOLKIT_RUNTIME=%s: runs a job and publishes its result without ever opening a database",
    async (runtime, extra: Record<string, string>) => {
      const { env: daprEnv } = await openSidecar();
      const env = {
        ...daprEnv,
        ...extra,
        MATOOLKIT_RUNTIME: runtime,
        MATOOLKIT_WORKER_ID: "worker-dapr",
        LOG_LEVEL: "silent",
      };
      const part = workerPart(env);
      const { usesSql, ...boot } = bootOptionsFor([part]);
      expect(usesSql).toBe(false);
      const openDatabase = vi.fn(async () => {
        throw new Error("the worker opened a database");
      });
      const platform = await bootRuntimePlatform(platformConfigFromEnv(env, { usesSql }), "worker", {
        ...boot,
        openDatabase,
      });
      const running: ComposedServices<readonly [typeof part]> = await startServices(platform, [part]);
      cleanups.push(() => running.stop());
      expect(platform.databaseKind).toBe("none");

      const sent = job("worker-dapr");
      await sendJob(sent);
      const result = await resultOf(sent.JobId);
      expect(result).toMatchObject({
        JobId: sent.JobId,
        Status: "Success",
        CorrelationData: sent.CorrelationData,
      });
      expect(openDatabase).not.toHaveBeenCalled();
    },
  );

  it("main.ts starts without DATABASE_URL, answers a job on worker-results, and stops on SIGTERM", async () => {
    const { env: daprEnv } = await openSidecar();
    // Node with tsx's loader, not the tsx CLI: the CLI relays a signal to its child and SIGKILLs
    // it (exit 143) when the child does not confirm within 30 ms, which a loaded machine misses
    // (seen once in a full `npm test`). The SIGTERM under test is main.ts's, not tsx's relay.
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "services/worker/src/main.ts"], {
      cwd: repo,
      env: {
        PATH: process.env.PATH ?? "",
        ...daprEnv,
        MATOOLKIT_RUNTIME: "aca",
        MATOOLKIT_WORKER_ID: "worker-main-dapr",
        // Where an embedded PostgreSQL would go if one were started: it must stay empty.
        MATOOLKIT_DATA_DIR: join(tmpdir(), `matoolkit-dapr-worker-${randomUUID()}`),
        LOG_LEVEL: "info",
      },
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });

    const sent = job("worker-main-dapr");
    await sendJob(sent);
    expect(await resultOf(sent.JobId)).toMatchObject({ JobId: sent.JobId, Status: "Success" });

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stderr).toContain("worker: SIGTERM received, shutting down");
    const lines = stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { msg?: string; database?: string });
    expect(lines.find((line) => line.msg === "runtime adapters")).toMatchObject({ database: "none" });
    expect(lines.some((line) => line.msg === "starting embedded PostgreSQL")).toBe(false);
  });
});
