import { createServer } from "node:net";
import { freePort } from "@matoolkit/dapr-harness/free-port";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { describeWorkflowEngineContract } from "../../../test/contract/index.ts";
import { createLogger } from "../../logger.ts";
import type { WorkflowContext, WorkflowEngine, WorkflowInstanceStatus } from "../../ports/index.ts";
import { createDaprWorkflowEngine } from "./dapr-workflow-engine.ts";
import { loadDaprWorkflowSdk } from "./dapr-workflow-sdk.ts";
import {
  startTaskHubSidecarStandIn,
  type TaskHubSidecarStandIn,
} from "../../../test/dapr/workflow/task-hub-sidecar-stand-in.ts";
import { toWorkflowInstanceStatus } from "./workflow-instance-status.ts";

// Dapr's real WorkflowRuntime and DaprWorkflowClient, over gRPC, against a stand-in of the
// sidecar's workflow API (see libs/runtime/test/dapr/workflow/task-hub-sidecar-stand-in.ts): no daprd runs here.
const logger = createLogger({ level: "silent", name: "dapr-workflow-test" });
const token = "test-api-token";

// Dapr's SDK narrates every work item on the console (its worker takes no logger): keep the
// test output readable. Its warnings and errors still show.
beforeAll(() => {
  vi.spyOn(console, "info").mockImplementation(() => undefined);
  vi.spyOn(console, "debug").mockImplementation(() => undefined);
});
afterAll(() => vi.restoreAllMocks());

async function engineOn(sidecar: { port: number }, apiToken: string | undefined = token) {
  return createDaprWorkflowEngine({
    daprHost: "127.0.0.1",
    daprGrpcPort: String(sidecar.port),
    ...(apiToken === undefined ? {} : { apiToken }),
    logger,
  });
}

describeWorkflowEngineContract("Dapr Workflow (Dapr SDK over a sidecar stand-in)", async () => {
  const sidecar = await startTaskHubSidecarStandIn({ apiToken: token });
  const engine = await engineOn(sidecar);
  return {
    ...engine,
    async stop() {
      await engine.stop();
      await sidecar.close();
    },
  };
});

describe("Dapr workflow engine", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function running(
    definitions: Parameters<WorkflowEngine["register"]>[0][],
    options: { apiToken?: string } = {},
  ): Promise<{ engine: WorkflowEngine; sidecar: TaskHubSidecarStandIn }> {
    const sidecar = await startTaskHubSidecarStandIn({ apiToken: token });
    cleanups.push(() => sidecar.close());
    const engine = await engineOn(sidecar, options.apiToken ?? token);
    cleanups.push(() => engine.stop());
    for (const definition of definitions) engine.register(definition);
    await engine.start();
    return { engine, sidecar };
  }

  async function until(predicate: () => Promise<boolean> | boolean, what: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!(await predicate())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const waitsForFinish = {
    name: "waits",
    workflow: async function* (ctx: WorkflowContext) {
      yield ctx.waitForExternalEvent("finish");
    } as never,
    activities: {},
  };

  it("starts an instance once when two callers ensure it at the same moment", async () => {
    const { engine } = await running([waitsForFinish]);
    const started = await Promise.all([
      engine.ensureInstance("waits", "batch-7", {}),
      engine.ensureInstance("waits", "batch-7", {}),
      engine.ensureInstance("waits", "batch-7", {}),
    ]);
    expect(started.filter(Boolean)).toHaveLength(1);
    expect(await engine.status("batch-7")).toBe("running");
  });

  it("suspends, resumes and terminates a running instance, and ignores unknown ones", async () => {
    const { engine } = await running([waitsForFinish]);
    await engine.ensureInstance("waits", "s-1", {});
    await engine.suspend("s-1");
    expect(await engine.status("s-1")).toBe("suspended");
    expect(await engine.ensureInstance("waits", "s-1", {})).toBe(false);
    await engine.resume("s-1");
    expect(await engine.status("s-1")).toBe("running");
    await engine.terminate("s-1", "operator cancelled the batch");
    await until(async () => (await engine.status("s-1")) === "terminated", "termination");
    await expect(engine.terminate("nobody", "x")).resolves.toBeUndefined();
    await expect(engine.suspend("nobody")).resolves.toBeUndefined();
    await expect(engine.resume("nobody")).resolves.toBeUndefined();
  });

  it("does not let an activity's error text (member data) into the workflow's history", async () => {
    const seen: string[] = [];
    const { engine } = await running([
      {
        name: "leaky",
        workflow: async function* (ctx: WorkflowContext) {
          try {
            yield ctx.callActivity("lookup", null);
          } catch (error) {
            yield ctx.callActivity("note", error instanceof Error ? error.message : String(error));
          }
        } as never,
        activities: {
          lookup: async () => {
            throw new Error("no mailbox for jane.doe@contoso.com");
          },
          note: async (message: string) => void seen.push(message),
        } as never,
      },
    ]);
    await engine.ensureInstance("leaky", "l-1", {});
    await until(async () => (await engine.status("l-1")) === "completed", "completion");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain("no mailbox for [email]");
    expect(seen[0]).not.toContain("jane.doe");
  });

  it("waits for a sidecar that comes up after the app, then runs workflows", async () => {
    const port = await freePort();
    const engine = await engineOn({ port });
    cleanups.push(() => engine.stop());
    const notes: string[] = [];
    engine.register({
      name: "late",
      workflow: async function* (ctx: WorkflowContext) {
        yield ctx.callActivity("note", "ran");
      } as never,
      activities: { note: async (text: string) => void notes.push(text) } as never,
    });
    let started = false;
    const starting = engine.start().then(() => (started = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(started).toBe(false);
    const sidecar = await startTaskHubSidecarStandIn({ port, apiToken: token });
    cleanups.push(() => sidecar.close());
    await starting;
    await engine.ensureInstance("late", "late-1", {});
    await until(() => notes.length === 1, "the workflow's activity");
  });

  it("answers terminate, suspend and resume once the instance is in that state, as daprd does", async () => {
    const { engine } = await running([waitsForFinish]);
    expect(await engine.ensureInstance("waits", "w-1", {})).toBe(true);
    expect(await engine.status("w-1")).toBe("running");
    await engine.suspend("w-1");
    expect(await engine.status("w-1")).toBe("suspended");
    await engine.resume("w-1");
    expect(await engine.status("w-1")).toBe("running");
    await engine.terminate("w-1", "operator cancelled the batch");
    expect(await engine.status("w-1")).toBe("terminated");
  });

  describe("on daprd ≤1.17, where workflow calls wait for actors and actors for the app's port", () => {
    async function gated() {
      const appPort = await freePort();
      const sidecar = await startTaskHubSidecarStandIn({ apiToken: token, appPortBeforeActors: { appPort } });
      cleanups.push(() => sidecar.close());
      const engine = await engineOn(sidecar);
      return { appPort, sidecar, engine };
    }

    it("start() resolves once the app's port is open, and then runs workflows", async () => {
      const { appPort, sidecar, engine } = await gated();
      cleanups.push(() => engine.stop());
      const notes: string[] = [];
      engine.register({
        name: "gated",
        workflow: async function* (ctx: WorkflowContext) {
          yield ctx.callActivity("note", "ran");
        } as never,
        activities: { note: async (text: string) => void notes.push(text) } as never,
      });
      let started = false;
      const starting = engine.start().then(() => (started = true));
      await until(() => sidecar.callsWaitingForApp > 0, "the readiness lookup to wait for actors");
      expect(started).toBe(false);
      const app = await listenOn(appPort);
      cleanups.push(() => app.close());
      await starting;
      await engine.ensureInstance("gated", "g-1", {});
      await until(() => notes.length === 1, "the workflow's activity");
    });

    it("stop() returns while start() still waits for the sidecar's actors", async () => {
      const { sidecar, engine } = await gated();
      const starting = engine.start();
      await until(() => sidecar.callsWaitingForApp > 0, "the readiness lookup to wait for actors");
      await engine.stop();
      await expect(starting).rejects.toThrow(/workflow engine stopped/u);
    });
  });

  it("sends the API token: a sidecar that expects another one refuses the calls", async () => {
    const sidecar = await startTaskHubSidecarStandIn({ apiToken: token });
    cleanups.push(() => sidecar.close());
    const engine = await engineOn(sidecar, "wrong-token");
    cleanups.push(() => engine.stop());
    await expect(engine.ensureInstance("waits", "t-1", {})).rejects.toThrow(
      /Dapr workflow state lookup of instance t-1 failed: .*UNAUTHENTICATED/u,
    );
  });

  it("rejects options that cannot address a sidecar", () => {
    expect(() => createDaprWorkflowEngine({ daprHost: "127.0.0.1", daprGrpcPort: "dapr", logger })).toThrow(
      /daprGrpcPort is not a port number/u,
    );
    expect(() => createDaprWorkflowEngine({ daprHost: "", daprGrpcPort: "50001", logger })).toThrow(
      /daprHost is empty/u,
    );
  });
});

describe("Dapr runtime status in the port's terms", () => {
  const Status = loadDaprWorkflowSdk().WorkflowRuntimeStatus;
  const cases: [keyof typeof Status, WorkflowInstanceStatus][] = [
    ["RUNNING", "running"],
    ["PENDING", "running"],
    ["CONTINUED_AS_NEW", "running"],
    ["SUSPENDED", "suspended"],
    ["COMPLETED", "completed"],
    ["FAILED", "failed"],
    ["TERMINATED", "terminated"],
  ];

  it.each(cases)("%s is %s", (name, expected) => {
    expect(toWorkflowInstanceStatus({ runtimeStatus: Status[name] }, Status)).toBe(expected);
  });

  it("covers every status Dapr's SDK defines", () => {
    const defined = Object.keys(Status).filter((key) => Number.isNaN(Number(key)));
    expect(defined.sort()).toEqual(cases.map(([name]) => name).sort());
  });

  it("an unknown instance is not_found", () => {
    expect(toWorkflowInstanceStatus(undefined, Status)).toBe("not_found");
  });
});

/** A TCP listener on the app's port: all daprd's start-up check asks of the app. */
function listenOn(port: number): Promise<{ close(): Promise<void> }> {
  return new Promise((resolveListening, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () =>
      resolveListening({ close: () => new Promise((closed) => server.close(() => closed())) }),
    );
  });
}
