import { createLogger } from "@matoolkit/runtime";
import { describe, expect, it } from "vitest";
import type { RuntimePlatform } from "./boot-platform.ts";
import { bootOptionsFor, startServices, type ServicePart } from "./compose-services.ts";

/** Records the order of what the wiring does; the ports are never touched by these parts. */
function recordingPlatform(calls: string[]): RuntimePlatform {
  return {
    logger: createLogger({ level: "silent", name: "compose-test" }),
    start: async () => void calls.push("platform.start"),
    stop: async () => void calls.push("platform.stop"),
  } as Partial<RuntimePlatform> as RuntimePlatform;
}

function part(name: string, calls: string[], fail = false): ServicePart<RuntimePlatform> {
  return {
    name,
    needs: { sql: name !== "worker", outboxRelay: name === "api", workerJobDeadLetters: name === "orch" },
    async start() {
      calls.push(`${name}.start`);
      if (fail) throw new Error(`${name} failed`);
      return {
        afterPlatformStart: async () => void calls.push(`${name}.after`),
        stop: async () => void calls.push(`${name}.stop`),
      };
    },
  };
}

describe("startServices", () => {
  it("starts the parts in order, then the platform, then their after-start work; stops in reverse", async () => {
    const calls: string[] = [];
    const running = await startServices(recordingPlatform(calls), [
      part("orch", calls),
      part("worker", calls),
    ]);
    expect(calls).toEqual(["orch.start", "worker.start", "platform.start", "orch.after", "worker.after"]);
    calls.length = 0;
    await running.stop();
    expect(calls).toEqual(["worker.stop", "orch.stop", "platform.stop"]);
  });

  it("stops what started, and the platform, when a part fails to start", async () => {
    const calls: string[] = [];
    await expect(
      startServices(recordingPlatform(calls), [
        part("orch", calls),
        part("api", calls, true),
        part("worker", calls),
      ]),
    ).rejects.toThrow("api failed");
    expect(calls).toEqual(["orch.start", "api.start", "orch.stop", "platform.stop"]);
  });
});

describe("bootOptionsFor", () => {
  it("asks the platform for the union of what the parts need", () => {
    expect(bootOptionsFor([part("worker", [])])).toEqual({
      usesSql: false,
      outboxRelay: false,
      adoptWorkerJobDeadLetters: false,
    });
    expect(bootOptionsFor([part("orch", []), part("worker", []), part("api", [])])).toEqual({
      usesSql: true,
      outboxRelay: true,
      adoptWorkerJobDeadLetters: true,
    });
  });
});
