import { openRealSidecar, type RealSidecarFixture } from "@matoolkit/dapr-harness";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { describeWorkflowEngineContract } from "../../../test/contract/index.ts";
import { createLogger } from "../../logger.ts";
import type { WorkflowContext, WorkflowEngine } from "../../ports/index.ts";
import { createDaprAppServer } from "../dapr-app-server.ts";
import { createDaprWorkflowEngine } from "./dapr-workflow-engine.ts";

/**
 * Dapr Workflow through Dapr's SDK against a REAL daprd (MATOOLKIT_DAPR_VERSION, default the
 * newest pinned) with real placement and scheduler, workflow state in Redis (components/local),
 * and dapr/config.yaml as shipped.
 */
const version = process.env.MATOOLKIT_DAPR_VERSION ?? "newest";
const logger = createLogger({ level: "silent", name: "dapr-workflow-real-test" });

// Dapr's SDK narrates every work item on the console (its worker takes no logger).
beforeAll(() => {
  vi.spyOn(console, "info").mockImplementation(() => undefined);
  vi.spyOn(console, "debug").mockImplementation(() => undefined);
});
afterAll(() => vi.restoreAllMocks());

/** A real sidecar, an app port answering it (daprd ≤1.17 starts actors only then), and the engine. */
async function engineOnRealDapr(): Promise<WorkflowEngine> {
  return (await engineAndSidecar()).engine;
}

async function engineAndSidecar(): Promise<{ engine: WorkflowEngine; fixture: RealSidecarFixture }> {
  const fixture = await openRealSidecar({ version, env: process.env });
  const app = createDaprAppServer({ host: "127.0.0.1", port: fixture.appPort, logger });
  await app.listen();
  const engine = createDaprWorkflowEngine({
    daprHost: "127.0.0.1",
    daprGrpcPort: String(fixture.daprd.grpcPort),
    logger,
  });
  return {
    fixture,
    engine: {
      ...engine,
      async stop() {
        await engine.stop();
        await app.close();
        await fixture.close();
      },
    },
  };
}

describeWorkflowEngineContract(`Dapr Workflow on real daprd (${version})`, engineOnRealDapr);

describe(`Dapr Workflow on real daprd (${version}): bursts`, { timeout: 240_000 }, () => {
  let engine: WorkflowEngine | undefined;
  afterEach(async () => {
    await engine?.stop();
    engine = undefined;
  });

  it("completes 200 instances started at once: none is dropped by the SDK's work item queue", async () => {
    engine = await engineOnRealDapr();
    const done = new Set<string>();
    const workflow = async function* (ctx: WorkflowContext, input: { id: string }) {
      yield ctx.callActivity("first", input.id);
      yield ctx.callActivity("second", input.id);
    };
    engine.register({
      name: "burst",
      workflow: workflow as never,
      activities: {
        first: async () => new Promise((resolve) => setTimeout(resolve, 50)),
        second: async (id: string) => void done.add(id),
      } as never,
    });
    await engine.start();
    const ids = Array.from({ length: 200 }, (_, index) => `burst-${index}`);
    await Promise.all(ids.map((id) => engine!.ensureInstance("burst", id, { id })));
    const deadline = Date.now() + 180_000;
    while (done.size < ids.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect(done.size).toBe(ids.length);
    // Each instance completes once its last activity's result is back in the sidecar.
    const statuses = async () => new Set(await Promise.all(ids.map((id) => engine!.status(id))));
    while (Date.now() < deadline && (await statuses()).size > 1) await new Promise((r) => setTimeout(r, 500));
    expect(await statuses()).toEqual(new Set(["completed"]));
  });

  it.each([
    { how: "kill", done: "killed" },
    { how: "stop", done: "stopped" },
  ] as const)(
    "carries on after its daprd is $done and started again: the workflow worker reconnects",
    async ({ how }) => {
      const { engine: running, fixture } = await engineAndSidecar();
      engine = running;
      const notes: string[] = [];
      const workflow = async function* (ctx: WorkflowContext) {
        yield ctx.callActivity("note", "before");
        yield ctx.waitForExternalEvent("go");
        yield ctx.callActivity("note", "after");
      };
      engine.register({
        name: "survivor",
        workflow: workflow as never,
        activities: { note: async (tag: string) => void notes.push(tag) } as never,
      });
      await engine.start();
      await engine.ensureInstance("survivor", "s-1", {});
      const until = async (done: () => Promise<boolean> | boolean, what: string) => {
        const deadline = Date.now() + 60_000;
        while (!(await done())) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      };
      await until(() => notes.length === 1, "the first activity");
      // Before the watchdog, the SDK's worker gave up on its first stream error for good: the
      // instance stayed running and no activity ran again.
      await fixture.daprd.restart(how);
      await until(
        async () => (await engine!.status("s-1").catch(() => "unknown")) === "running",
        "the sidecar back",
      );
      await engine.raiseEvent("s-1", "go", {});
      await until(async () => (await engine!.status("s-1")) === "completed", "completion after the restart");
      // Activities are at-least-once: one whose result daprd had not saved when it went down runs
      // again (ours are idempotent); what matters is that the instance moved on.
      expect(notes.at(-1)).toBe("after");
      expect(new Set(notes)).toEqual(new Set(["before", "after"]));
    },
  );
});
