import { afterEach, describe, expect, it } from "vitest";
import type {
  WorkflowContext,
  WorkflowDefinition,
  WorkflowEngine,
  WorkflowTask,
} from "../../src/ports/index.ts";

/**
 * What every WorkflowEngine adapter must do for the batch workflow to be correct: the embedded
 * engine's test runs this suite, and the Dapr Workflow adapter will run the same one.
 */
export function describeWorkflowEngineContract(
  name: string,
  makeEngine: () => Promise<WorkflowEngine>,
): void {
  describe(`WorkflowEngine contract: ${name}`, () => {
    let engine: WorkflowEngine | undefined;
    afterEach(async () => {
      await engine?.stop();
      engine = undefined;
    });

    async function started(...definitions: WorkflowDefinition<never, unknown>[]): Promise<WorkflowEngine> {
      engine = await makeEngine();
      for (const definition of definitions) engine.register(definition);
      await engine.start();
      return engine;
    }

    async function until(predicate: () => Promise<boolean> | boolean, what: string): Promise<void> {
      const deadline = Date.now() + 10_000;
      while (!(await predicate())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }

    it("runs activities in order and passes their results back", async () => {
      const seen: number[] = [];
      const workflow = async function* (ctx: WorkflowContext, input: { n: number }) {
        const doubled = (yield ctx.callActivity("double", input.n)) as number;
        seen.push((yield ctx.callActivity("record", doubled)) as number);
      };
      const e = await started({
        name: "chain",
        workflow: workflow as never,
        activities: { double: async (n: number) => n * 2, record: async (n: number) => n + 1 } as never,
      });
      expect(await e.ensureInstance("chain", "i-1", { n: 20 })).toBe(true);
      await until(async () => (await e.status("i-1")) === "completed", "completion");
      expect(seen).toEqual([41]);
    });

    it("wakes on an external event before a long timer, and on the timer when no event comes", async () => {
      const outcomes: string[] = [];
      const workflow = async function* (ctx: WorkflowContext) {
        // Long enough that the event, raised right after the start, wins even on a loaded machine
        // through a real sidecar (300 ms lost to it there); the timer case waits it out.
        const timer = ctx.createTimer(new Date(ctx.now.getTime() + 3_000));
        const event = ctx.waitForExternalEvent<{ who: string }>("advance");
        const winner = (yield ctx.whenAny([timer, event])) as WorkflowTask;
        outcomes.push(winner === event ? "event" : "timer");
      };
      const e = await started({ name: "race", workflow: workflow as never, activities: {} });
      await e.ensureInstance("race", "with-event", {});
      await e.raiseEvent("with-event", "advance", { who: "operator" });
      await until(async () => (await e.status("with-event")) === "completed", "event run");
      await e.ensureInstance("race", "with-timer", {});
      await until(async () => (await e.status("with-timer")) === "completed", "timer run");
      expect(outcomes).toEqual(["event", "timer"]);
    });

    it("starts an instance once while it runs, and afresh after it ended", async () => {
      const runs: string[] = [];
      const workflow = async function* (ctx: WorkflowContext, input: { tag: string }) {
        yield ctx.callActivity("note", input.tag);
        yield ctx.waitForExternalEvent("finish");
      };
      const e = await started({
        name: "once",
        workflow: workflow as never,
        activities: { note: async (tag: string) => void runs.push(tag) } as never,
      });
      expect(await e.ensureInstance("once", "b-1", { tag: "first" })).toBe(true);
      expect(await e.ensureInstance("once", "b-1", { tag: "second" })).toBe(false);
      await until(() => runs.length === 1, "first activity");
      await e.raiseEvent("b-1", "finish");
      await until(async () => (await e.status("b-1")) === "completed", "finish");
      expect(await e.ensureInstance("once", "b-1", { tag: "third" })).toBe(true);
      await until(() => runs.length === 2, "restart");
      expect(runs).toEqual(["first", "third"]);
    });

    it("lets the workflow catch a failed activity and carry on", async () => {
      let attempts = 0;
      const workflow = async function* (ctx: WorkflowContext) {
        for (;;) {
          try {
            return (yield ctx.callActivity("flaky", null)) as string;
          } catch {
            yield ctx.createTimer(new Date(ctx.now.getTime() + 20));
          }
        }
      };
      const e = await started({
        name: "catching",
        workflow: workflow as never,
        activities: {
          flaky: async () => {
            attempts += 1;
            if (attempts < 3) throw new Error("database unavailable");
            return "ok";
          },
        },
      });
      await e.ensureInstance("catching", "c-1", {});
      await until(async () => (await e.status("c-1")) === "completed", "completion after failures");
      expect(attempts).toBe(3);
    });

    it("continues as new with a fresh input", async () => {
      const seen: number[] = [];
      const workflow = async function* (ctx: WorkflowContext, input: { round: number }) {
        yield ctx.callActivity("note", input.round);
        if (input.round < 3) ctx.continueAsNew({ round: input.round + 1 });
      };
      const e = await started({
        name: "rounds",
        workflow: workflow as never,
        activities: { note: async (n: number) => void seen.push(n) } as never,
      });
      await e.ensureInstance("rounds", "r-1", { round: 1 });
      await until(() => seen.length === 3 && seen[2] === 3, "three rounds");
      expect(seen).toEqual([1, 2, 3]);
    });

    it("ignores events for instances that do not run", async () => {
      const e = await started({ name: "noop", workflow: async function* () {} as never, activities: {} });
      await expect(e.raiseEvent("missing", "advance", {})).resolves.toBeUndefined();
      expect(await e.status("missing")).toBe("not_found");
    });
  });
}
