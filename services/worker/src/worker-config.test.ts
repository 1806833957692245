import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pacingSettingsOf, workerConfigFromEnv } from "./worker-config.ts";

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

  describe("pacing (issue 30)", () => {
    it("is off unless set, and reads the rate and the in-flight caps", () => {
      expect(pacingSettingsOf(workerConfigFromEnv({}))).toEqual({ maxInFlight: {} });
      const config = workerConfigFromEnv({
        MATOOLKIT_RATE_LIMIT: "2.5",
        MATOOLKIT_GRAPH_MAX_IN_FLIGHT: "8",
        MATOOLKIT_EXCHANGE_MAX_IN_FLIGHT: " 3 ",
      });
      expect(config).toMatchObject({ rateLimit: 2.5, graphMaxInFlight: 8, exchangeMaxInFlight: 3 });
      expect(pacingSettingsOf(config)).toEqual({
        jobStartsPerSecond: 2.5,
        maxInFlight: { graph: 8, exchange: 3 },
      });
    });

    it.each([
      [
        "MATOOLKIT_RATE_LIMIT",
        "20/s",
        "MATOOLKIT_RATE_LIMIT: job starts per second: a number, e.g. 20 or 0.5",
      ],
      ["MATOOLKIT_RATE_LIMIT", "0", "MATOOLKIT_RATE_LIMIT: job starts per second: a number > 0"],
      ["MATOOLKIT_RATE_LIMIT", "-3", "MATOOLKIT_RATE_LIMIT: job starts per second: a number > 0"],
      ["MATOOLKIT_RATE_LIMIT", "20000", "MATOOLKIT_RATE_LIMIT: job starts per second: at most 10000"],
      [
        "MATOOLKIT_GRAPH_MAX_IN_FLIGHT",
        "eight",
        "MATOOLKIT_GRAPH_MAX_IN_FLIGHT: calls at once: a whole number",
      ],
      [
        "MATOOLKIT_GRAPH_MAX_IN_FLIGHT",
        "2.5",
        "MATOOLKIT_GRAPH_MAX_IN_FLIGHT: calls at once: a whole number",
      ],
      [
        "MATOOLKIT_EXCHANGE_MAX_IN_FLIGHT",
        "0",
        "MATOOLKIT_EXCHANGE_MAX_IN_FLIGHT: calls at once: at least 1",
      ],
    ])("fails naming %s when it is %j", (variable, value, message) => {
      expect(() => workerConfigFromEnv({ [variable]: value })).toThrow(message);
    });

    it("refuses a rate too low to start every delivery the worker holds within a minute", () => {
      expect(() =>
        workerConfigFromEnv({ MATOOLKIT_RATE_LIMIT: "0.5", MATOOLKIT_WORKER_CONCURRENCY: "64" }),
      ).toThrow(
        "Invalid worker configuration: MATOOLKIT_RATE_LIMIT: 0.5 job starts per second cannot start the 64 " +
          "deliveries MATOOLKIT_WORKER_CONCURRENCY lets wait within 60 s (the longest a delivery waits for " +
          "its turn); set at least 1.07, or lower MATOOLKIT_WORKER_CONCURRENCY to 30 or less",
      );
      expect(() => workerConfigFromEnv({ MATOOLKIT_RATE_LIMIT: "0.01" })).toThrow(
        /MATOOLKIT_RATE_LIMIT: 0\.01 .* set at least 0\.07$/,
      );
      // Exactly enough: 30 slots at 0.5/s start within 60 s.
      expect(
        workerConfigFromEnv({ MATOOLKIT_RATE_LIMIT: "0.5", MATOOLKIT_WORKER_CONCURRENCY: "30" }).rateLimit,
      ).toBe(0.5);
    });
  });
});
