import { randomBytes } from "node:crypto";
import type { TenantClients } from "../../../src/tenant/tenant-clients.ts";
import type { TenantFixture } from "./tenant-fixture.ts";

/** The parts of a fixture that do not depend on which tenant it is. */
export function createFixtureBase(options: {
  tenant: TenantClients;
  domain: string;
  pollMs: number;
  timeoutMs: number;
}): { fixture: TenantFixture; runCleanups(): Promise<string[]> } {
  const runId = randomBytes(3).toString("hex");
  let counter = 0;
  let stepId = 0;
  const cleanups: (() => Promise<void>)[] = [];
  const fixture: TenantFixture = {
    tenant: options.tenant,
    domain: options.domain,
    uniqueName: (prefix) => `${prefix}-${runId}-${++counter}`,
    context: (overrides = {}) => ({
      jobId: `contract-${runId}-${++stepId}`,
      stepExecutionId: stepId,
      isInitStep: false,
      batchId: 1,
      attempt: 1,
      signal: new AbortController().signal,
      tenant: options.tenant,
      ...overrides,
    }),
    cleanup: (action) => {
      cleanups.push(action);
    },
    eventually: async (probe, what) => {
      const deadline = Date.now() + options.timeoutMs;
      for (;;) {
        const value = await probe();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, options.pollMs));
      }
    },
  };
  return {
    fixture,
    // Cleanups failures are collected: one leftover object must not hide the others' removal.
    runCleanups: async () => {
      const failures: string[] = [];
      for (const action of cleanups.reverse()) {
        try {
          await action();
        } catch (error) {
          failures.push(error instanceof Error ? error.message : String(error));
        }
      }
      cleanups.length = 0;
      return failures;
    },
  };
}
