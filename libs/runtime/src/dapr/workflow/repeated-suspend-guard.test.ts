import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { loadDaprWorkflowSdk } from "./dapr-workflow-sdk.ts";

/**
 * The guard on Dapr's own executor (@dapr/dapr 3.18.0): a history suspended twice before its
 * resume, as daprd 1.18 records it when a paused batch is suspended by two callers at once.
 * Without the guard the executor's resume loop never ends (repeated-suspend-guard.ts); the logger
 * below stops it after 1,000 turns so that this test fails instead of hanging.
 */
const require = createRequire(import.meta.url);
const internal = (path: string) => require(`@dapr/dapr/workflow/internal/durabletask/${path}`);

async function replay(suspends: number) {
  const sdk = loadDaprWorkflowSdk();
  const { OrchestrationExecutor } = internal("worker/orchestration-executor.js");
  const { Registry } = internal("worker/registry.js");
  const ph = internal("utils/pb-helper.util.js");
  const registry = new Registry();
  registry.addNamedOrchestrator(
    "approval",
    async function* (ctx: { waitForExternalEvent(name: string): unknown }) {
      yield ctx.waitForExternalEvent("approved");
      return "approved";
    },
  );
  const executor = new OrchestrationExecutor(registry);
  let buffered = 0;
  const quiet = () => undefined;
  executor.logger = {
    info: (message: string) => {
      if (message.includes("buffering") && ++buffered > 1_000) throw new Error("resume loop did not end");
    },
    debug: quiet,
    warn: quiet,
    error: quiet,
  };
  const at = new Date("2026-11-26T19:00:00Z");
  const result = await executor.execute(
    "batch-3",
    [ph.newOrchestratorStartedEvent(at), ph.newExecutionStartedEvent("approval", "batch-3", undefined)],
    [
      ph.newOrchestratorStartedEvent(at),
      ...Array.from({ length: suspends }, () => ph.newSuspendEvent()),
      ph.newEventRaisedEvent("approved", undefined),
      ph.newResumeEvent(),
    ],
  );
  const completion = result.actions[0]?.getCompleteorchestration();
  return { guarded: sdk.repeatedSuspendsGuarded, buffered, output: completion?.getResult()?.getValue() };
}

describe("Dapr workflow SDK: repeated suspends", () => {
  it("replays a history suspended twice before its resume to the workflow's result", async () => {
    const { guarded, output, buffered } = await replay(2);
    expect(guarded).toBe(true);
    expect(output).toBe(JSON.stringify("approved"));
    expect(buffered).toBeLessThan(10);
  });

  it("leaves a single suspend and resume as they were", async () => {
    expect((await replay(1)).output).toBe(JSON.stringify("approved"));
  });
});
