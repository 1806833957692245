import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { workerConfigFromEnv } from "./worker-config.ts";

describe("workerConfigFromEnv", () => {
  it("uses the defaults when nothing is set or values are blank", () => {
    expect(workerConfigFromEnv({ MATOOLKIT_WORKER_CONCURRENCY: "  " })).toEqual({
      workerId: "worker-01",
      concurrency: 4,
      jobTimeoutSeconds: 3600,
      leaseSeconds: 30,
    });
  });

  it("reads every variable", () => {
    const config = workerConfigFromEnv({
      MATOOLKIT_WORKER_ID: "worker-02",
      MATOOLKIT_WORKER_CONCURRENCY: "8",
      MATOOLKIT_WORKER_JOB_TIMEOUT_SECONDS: "120",
      MATOOLKIT_WORKER_LEASE_SECONDS: "45",
    });
    expect(config).toEqual({
      workerId: "worker-02",
      concurrency: 8,
      jobTimeoutSeconds: 120,
      leaseSeconds: 45,
    });
  });

  it.each([
    ["MATOOLKIT_WORKER_CONCURRENCY", "many"],
    ["MATOOLKIT_WORKER_CONCURRENCY", "0"],
    ["MATOOLKIT_WORKER_JOB_TIMEOUT_SECONDS", "1.5"],
    ["MATOOLKIT_WORKER_ID", "worker'; DROP"],
    ["MATOOLKIT_WORKER_LEASE_SECONDS", "1"],
  ])("fails naming %s when it is %j", (variable, value) => {
    expect(() => workerConfigFromEnv({ [variable]: value })).toThrow(variable);
  });

  it("reads the custom functions directory and the idle exit, both unset by default", () => {
    expect(workerConfigFromEnv({})).not.toHaveProperty("idleExitSeconds", expect.anything());
    const dir = mkdtempSync(join(tmpdir(), "matoolkit-functions-dir-"));
    try {
      expect(
        workerConfigFromEnv({ MATOOLKIT_FUNCTIONS_DIR: dir, MATOOLKIT_WORKER_IDLE_EXIT_SECONDS: "300" }),
      ).toMatchObject({ functionsDir: dir, idleExitSeconds: 300 });

      const file = join(dir, "Get-Thing.ts");
      writeFileSync(file, "export default {};");
      expect(() => workerConfigFromEnv({ MATOOLKIT_FUNCTIONS_DIR: file })).toThrow(
        `MATOOLKIT_FUNCTIONS_DIR: ${file} is not a directory`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(() => workerConfigFromEnv({ MATOOLKIT_FUNCTIONS_DIR: "/nonexistent/CustomFunctions" })).toThrow(
      "MATOOLKIT_FUNCTIONS_DIR: /nonexistent/CustomFunctions does not exist",
    );
  });

  it.each(["0", "-5", "soon", "1.5"])(
    "fails naming MATOOLKIT_WORKER_IDLE_EXIT_SECONDS when it is %j",
    (value) => {
      expect(() => workerConfigFromEnv({ MATOOLKIT_WORKER_IDLE_EXIT_SECONDS: value })).toThrow(
        "MATOOLKIT_WORKER_IDLE_EXIT_SECONDS",
      );
    },
  );
});
