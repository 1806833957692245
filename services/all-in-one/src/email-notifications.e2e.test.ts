import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueLocalToken } from "@matoolkit/admin-api";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { startAll, type RunningSystem } from "./start-all.ts";
import { eventually, examplePath, exampleText } from "../test/test-support.ts";

/**
 * Email notifications (issue 31 item 7) in the whole system, as a rehearsal runs them: with
 * MATOOLKIT_NOTIFY_EMAIL=on the orchestrator mails a manual batch's end through the worker's
 * simulated tenant (the example tenant's Migration Admin mailbox), to the initiator (the
 * operator's identity, an address here) and the configured list; `tenant changes` shows the mail.
 */
describe("email notifications (all-in-one, simulated tenant)", { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let system: RunningSystem;
  let dataDir: string;
  let admin: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), "matoolkit-email-"));
    system = await startAll({
      MATOOLKIT_RUNTIME: "embedded",
      DATABASE_URL: database.url,
      MATOOLKIT_DATA_DIR: dataDir,
      PORT: "0",
      LOG_LEVEL: "silent",
      MATOOLKIT_TENANT: "simulated",
      MATOOLKIT_SIMULATED_TENANT_SEED: examplePath("fabrikam-tenant.json"),
      MATOOLKIT_SIMULATED_TENANT_PORT: "0",
      MATOOLKIT_NOTIFY_EMAIL: "on",
      MATOOLKIT_NOTIFY_EMAIL_FROM: "migration.admin@fabrikam.example",
      MATOOLKIT_NOTIFY_EMAIL_TO: "cutover-team@fabrikam.example",
    });
    admin = await issueLocalToken({
      dataDir,
      issuer: "matoolkit-local",
      audience: "api://matoolkit",
      roles: ["Admin"],
      name: "operator@fabrikam.example",
      ttlSeconds: 600,
    });
  });

  afterAll(async () => {
    await system?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function api(method: string, path: string, options: { body?: string; type?: string } = {}) {
    const headers: Record<string, string> = { authorization: `Bearer ${admin}` };
    if (options.type !== undefined) headers["content-type"] = options.type;
    const response = await fetch(`${system.apiUrl}/api${path}`, { method, headers, body: options.body });
    return { status: response.status, body: (await response.json()) as any };
  }

  it("mails a manual batch's end once, seen in the tenant's change log", async () => {
    expect(system.simulatedTenant).toBe(true);
    const published = await api("POST", "/runbooks", {
      body: exampleText("contoso-pilot.yaml"),
      type: "application/yaml",
    });
    expect(published.status).toBe(201);
    const created = await api("POST", "/batches?runbook=contoso-pilot", {
      body: exampleText("members.csv"),
      type: "text/csv",
    });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    expect(created.body.createdBy).toBe("operator@fabrikam.example");
    await api("POST", `/batches/${id}/advance`);
    await eventually(
      () => api("GET", `/batches/${id}`).then((r) => r.body),
      (b) => b.status === "active",
      "init to finish",
    );
    for (const phase of ["pre-checks", "cutover"]) {
      await api("POST", `/batches/${id}/advance`);
      await eventually(
        () => api("GET", `/batches/${id}`).then((r) => r.body),
        (b) => b.phases.find((p: { phaseName: string }) => p.phaseName === phase).status !== "dispatched",
        `phase ${phase} to finish`,
      );
    }
    await eventually(
      () => api("GET", `/batches/${id}`).then((r) => r.body),
      (b) => b.status === "completed" || b.status === "failed",
      "batch to end",
    );
    const mails = await eventually(
      () =>
        api("GET", "/tenant/changes").then((r) =>
          (r.body as Array<{ operation: string }>).filter(
            (change) => change.operation === "POST /v1.0/users/:id/sendMail",
          ),
        ),
      (changes) => changes.length === 1,
      "the batch-end mail in the tenant's change log",
    );
    expect(mails[0]).toMatchObject({
      target: "migration.admin@fabrikam.example",
      detail: "mail sent to 2 recipient(s)",
    });
  });
});
