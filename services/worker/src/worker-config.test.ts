import { describe, expect, it } from "vitest";
import { workerConfigFromEnv } from "./worker-config.ts";

describe("workerConfigFromEnv", () => {
  it("uses the defaults when nothing is set or values are blank", () => {
    expect(workerConfigFromEnv({ MATOOLKIT_WORKER_CONCURRENCY: "  " })).toEqual({
      workerId: "worker-01",
      concurrency: 4,
      jobTimeoutSeconds: 3600,
    });
  });

  it("reads every variable", () => {
    const config = workerConfigFromEnv({
      MATOOLKIT_WORKER_ID: "worker-02",
      MATOOLKIT_WORKER_CONCURRENCY: "8",
      MATOOLKIT_WORKER_JOB_TIMEOUT_SECONDS: "120",
    });
    expect(config).toEqual({ workerId: "worker-02", concurrency: 8, jobTimeoutSeconds: 120 });
  });

  it.each([
    ["MATOOLKIT_WORKER_CONCURRENCY", "many"],
    ["MATOOLKIT_WORKER_CONCURRENCY", "0"],
    ["MATOOLKIT_WORKER_JOB_TIMEOUT_SECONDS", "1.5"],
    ["MATOOLKIT_WORKER_ID", "worker'; DROP"],
  ])("fails naming %s when it is %j", (variable, value) => {
    expect(() => workerConfigFromEnv({ [variable]: value })).toThrow(variable);
  });
});
