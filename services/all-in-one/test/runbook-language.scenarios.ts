import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueLocalToken } from "@matoolkit/admin-api";
import { loadTenantSeed, startSimulatedTenant, type SimulatedTenant } from "@matoolkit/simulated-tenant";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import type { OpenedRuntime, RuntimeProfile } from "./runtime-profiles.ts";
import { startAll, type RunningSystem } from "../src/start-all.ts";
import { eventually } from "./test-support.ts";

const repoRoot = resolve(import.meta.dirname, "../../..");
/** examples/fabrikam-tenant.json's "Fabrikam - all staff": nobody of the wave is in it yet. */
const allStaffGroupId = "0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f";
/** The seed's wave-1 group: Adele is in it already (check-wave-groups checks it, one value of two). */
const waveOneGroupId = "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
/** Job starts per second the worker is paced to (MATOOLKIT_RATE_LIMIT). */
const rateLimit = 4;

/**
 * The runbook language of issue 30 in one runbook: a step `when:` (Megan has no mailbox, so her
 * mail-user check is skipped while Adele's runs), a `for_each:` step (Adele's two groups checked
 * one execution each, Megan's none: skipped), a phase behind `approval: required`, and a worker
 * paced by MATOOLKIT_RATE_LIMIT (set on the worker, not in the runbook).
 */
const runbook = `
name: runbook-language
description: when, for_each, approval gates and pacing on the simulated tenant (issue 30)
data_source:
  type: csv
  path: runbook-language.csv
  primary_key: SourceEmail
  batch_time_column: MigrationDate
  columns: [HasMailbox, StagingUPN, EmployeeId]
  multi_valued_columns:
    # The groups each member joins: what a for_each step iterates over (see grant-access).
    - name: Groups
      format: semicolon_delimited

retry:
  max_retries: 2
  interval: 1s

phases:
  - name: pre-checks
    offset: T-1d
    steps:
      - name: check-target-account
        worker_id: worker-01
        function: Test-EntraAttributeMatch
        params:
          UserId: "{{StagingUPN}}"
          Attributes:
            employeeId: "{{EmployeeId}}"
        retry:
          max_retries: 0
        timeout: 5m
      - name: check-mail-user
        worker_id: worker-01
        function: Test-ExchangeAttributeMatch
        when: "{{HasMailbox}} == 'true'"
        params:
          Identity: "{{StagingUPN}}"
          Attributes:
            RecipientTypeDetails: MailUser

  - name: grant-access
    offset: T-0
    approval: required
    steps:
      - name: add-to-all-staff
        worker_id: worker-01
        function: Add-EntraGroupMember
        params:
          GroupId: ${allStaffGroupId}
          UserId: "{{StagingUPN}}"
      # One execution per group of the member's Groups column (Adele: wave 1 and all staff, both
      # hers by now); none for Megan: skipped.
      - name: check-wave-groups
        worker_id: worker-01
        function: Test-EntraGroupMembership
        for_each: "{{Groups}}"
        params:
          GroupId: "{{item}}"
          UserId: "{{StagingUPN}}"
`;

const csv = [
  "SourceEmail,DisplayName,EmployeeId,StagingUPN,MigrationDate,HasMailbox,Groups",
  `adele.vance@contoso.example,Adele Vance,E1001,adele.vance.contoso@fabrikam.example,2026-12-05T09:00:00Z,true,${waveOneGroupId};${allStaffGroupId}`,
  `megan.bowen@contoso.example,Megan Bowen,E1002,megan.bowen.contoso@fabrikam.example,2026-12-05T09:00:00Z,false,`,
].join("\n");

interface PacingReading {
  workerId: string;
  jobStarts: number;
  startRate: { current: number; cap: number } | null;
  apis: unknown[];
}

/**
 * A manual batch running a runbook with `when:`, `for_each:`, an approval gate and a paced worker,
 * end to end on the simulated tenant, through the admin API.
 */
export function runbookLanguageScenarios(profile: RuntimeProfile): void {
  describe(
    `runbook language: when, for_each, approval gate, pacing on the simulated tenant (${profile.name} runtime)`,
    { timeout: 180_000 },
    () => {
      let database: TestDatabase;
      let runtime: OpenedRuntime;
      let system: RunningSystem;
      let tenant: SimulatedTenant;
      let dataDir: string;
      let admin: string;
      let operator: string;

      beforeAll(async () => {
        database = await createTestDatabase();
        dataDir = mkdtempSync(join(tmpdir(), "matoolkit-e2e-"));
        const seed = await loadTenantSeed(join(repoRoot, "examples/fabrikam-tenant.json"));
        tenant = await startSimulatedTenant({ seed, replicationDelayMs: 150 });
        runtime = await profile.open();
        system = await startAll({
          ...(await runtime.nextStart()),
          DATABASE_URL: database.url,
          MATOOLKIT_DATA_DIR: dataDir,
          PORT: "0",
          LOG_LEVEL: "silent",
          MATOOLKIT_POLL_SWEEP_SECONDS: "5",
          MATOOLKIT_TENANT: "simulated",
          MATOOLKIT_SIMULATED_TENANT_URL: tenant.url,
          MATOOLKIT_RATE_LIMIT: String(rateLimit),
          MATOOLKIT_GRAPH_MAX_IN_FLIGHT: "2",
          MATOOLKIT_EXCHANGE_MAX_IN_FLIGHT: "1",
        });
        const token = (role: "Admin" | "Operator") =>
          issueLocalToken({
            dataDir,
            issuer: "matoolkit-local",
            audience: "api://matoolkit",
            roles: [role],
            name: `e2e-${role.toLowerCase()}@example.test`,
            ttlSeconds: 600,
          });
        admin = await token("Admin");
        operator = await token("Operator");
      });

      afterAll(async () => {
        await system?.stop();
        await runtime?.close();
        await tenant?.close();
        await database?.drop();
        rmSync(dataDir, { recursive: true, force: true });
      });

      async function api(method: string, path: string, body?: { text: string; type: string }, token = admin) {
        const headers: Record<string, string> = { authorization: `Bearer ${token}` };
        if (body !== undefined) headers["content-type"] = body.type;
        const response = await fetch(`${system.apiUrl}/api${path}`, { method, headers, body: body?.text });
        return { status: response.status, body: (await response.json()) as any };
      }
      const batch = (id: number) => api("GET", `/batches/${id}`).then((r) => r.body);
      const phaseOf = (b: any, name: string) =>
        b.phases.find((p: { phaseName: string }) => p.phaseName === name);
      const workerPacing = async (): Promise<PacingReading> => {
        const { body } = await api("GET", "/worker/pacing");
        return body.workers.find((w: PacingReading) => w.workerId === "worker-01");
      };
      const allStaffMembers = () => [...tenant.state.groups.get(allStaffGroupId, "primary")!.members];

      it("takes two members down different paths, waits at the gate until approved, paced all along", async () => {
        // Pacing is on before anything runs: the cap is the configured rate, nothing started yet.
        expect(await workerPacing()).toMatchObject({
          jobStarts: 0,
          startRate: { current: rateLimit, cap: rateLimit },
        });

        const published = await api("POST", "/runbooks", { text: runbook, type: "application/yaml" });
        expect(published.status).toBe(201);
        const created = await api("POST", "/batches?runbook=runbook-language", {
          text: csv,
          type: "text/csv",
        });
        expect(created.status).toBe(201);
        const id = created.body.id as number;

        // pre-checks: no gate, runs at once. Adele's mail-user check runs, Megan's is skipped.
        const first = await api("POST", `/batches/${id}/advance`);
        expect(first.body).toMatchObject({
          action: "phase",
          phaseName: "pre-checks",
          phaseStatus: "dispatched",
        });
        await eventually(
          () => batch(id),
          (b) => phaseOf(b, "pre-checks").status === "completed",
          "pre-checks to complete",
        );
        const grid = await api("GET", `/batches/${id}/grid`);
        const paths = Object.fromEntries(
          grid.body.members.map(
            (m: { memberKey: string; steps: { phaseName: string; stepName: string; status: string }[] }) => [
              m.memberKey,
              m.steps.map((s) => `${s.phaseName}/${s.stepName}: ${s.status}`).sort(),
            ],
          ),
        );
        // A phase's steps exist once it is sent: none of grant-access's yet.
        expect(paths).toEqual({
          "adele.vance@contoso.example": [
            "pre-checks/check-mail-user: succeeded",
            "pre-checks/check-target-account: succeeded",
          ],
          "megan.bowen@contoso.example": [
            "pre-checks/check-mail-user: skipped",
            "pre-checks/check-target-account: succeeded",
          ],
        });
        // Three jobs ran (the skipped step never reached a worker), each through the pacer.
        const afterPreChecks = await eventually(
          workerPacing,
          (p) => p.jobStarts >= 3,
          "three job starts counted",
        );

        // grant-access: gated. Advancing it sends nothing; it waits for an operator.
        const gated = await api("POST", `/batches/${id}/advance`);
        expect(gated.status).toBe(202);
        expect(gated.body).toMatchObject({ phaseName: "grant-access", phaseStatus: "awaiting_approval" });
        const waiting = phaseOf(await batch(id), "grant-access");
        expect(waiting.status).toBe("awaiting_approval");
        // Long enough for a dispatched phase's jobs to have started and written (a few hundred ms).
        await new Promise((r) => setTimeout(r, 2_000));
        // Not one step of it exists yet (they are created when the phase is sent), no job started,
        // and the tenant is untouched.
        const stepsWhileWaiting = await api("GET", `/batches/${id}/steps`);
        expect(stepsWhileWaiting.body.steps).toHaveLength(4);
        expect(
          stepsWhileWaiting.body.steps.filter(
            (s: { phaseExecutionId: number }) => s.phaseExecutionId === waiting.id,
          ),
        ).toEqual([]);
        expect(phaseOf(await batch(id), "grant-access").status).toBe("awaiting_approval");
        expect((await workerPacing()).jobStarts).toBe(afterPreChecks.jobStarts);
        expect(allStaffMembers()).toEqual(["migration.admin@fabrikam.example"].map(idOf));
        // A manual batch cannot be advanced past a phase awaiting approval.
        expect((await api("POST", `/batches/${id}/advance`)).status).toBe(409);

        const approved = await api(
          "POST",
          `/batches/${id}/phases/${waiting.sequence}/approve`,
          undefined,
          operator,
        );
        expect(approved).toEqual({
          status: 202,
          body: {
            batchId: id,
            phaseExecutionId: waiting.id,
            phaseName: "grant-access",
            sequence: waiting.sequence,
            status: "dispatched",
            approvalDecision: "approved",
          },
        });
        const done = await eventually(
          () => batch(id),
          (b) => b.status === "completed" || b.status === "failed",
          "the batch to end",
        );
        expect(done.status).toBe("completed");
        expect(
          done.phases.map((p: { phaseName: string; status: string }) => [p.phaseName, p.status]),
        ).toEqual([
          ["pre-checks", "completed"],
          ["grant-access", "completed"],
        ]);

        // The steps list shows the skip too, with its reason in the timeline.
        const steps = await api("GET", `/batches/${id}/steps`);
        expect(
          steps.body.steps
            .map((s: { stepName: string; status: string }) => `${s.stepName}: ${s.status}`)
            .sort(),
        ).toEqual([
          "add-to-all-staff: succeeded",
          "add-to-all-staff: succeeded",
          "check-mail-user: skipped",
          "check-mail-user: succeeded",
          "check-target-account: succeeded",
          "check-target-account: succeeded",
          "check-wave-groups: skipped",
          "check-wave-groups: succeeded",
          "check-wave-groups: succeeded",
        ]);
        const events = (await api("GET", `/batches/${id}/events?limit=1000`)).body.items as Array<{
          entity: string;
          entityId: number;
          fromStatus: string | null;
          toStatus: string;
          reason: string | null;
          actor: string | null;
        }>;
        expect(
          events.filter((e) => e.entity === "step" && e.toStatus === "skipped").map((e) => e.reason),
        ).toEqual(["when: {{HasMailbox}} == 'true' is false", "for_each: {{Groups}} has no values"]);
        // The gate in the timeline and the audit trail: who advanced into it, who approved it.
        const gateEvents = events
          .filter((e) => e.entity === "phase" && e.entityId === waiting.id)
          .map((e) => [e.fromStatus, e.toStatus, e.actor]);
        expect(gateEvents.slice(0, 2)).toEqual([
          ["pending", "awaiting_approval", "e2e-admin@example.test"],
          ["awaiting_approval", "dispatched", "e2e-operator@example.test"],
        ]);
        const audit = await api("GET", `/audit?batchId=${id}&limit=1000`);
        expect(
          audit.body
            .filter((row: { entity: string }) => row.entity === "phase")
            .map((row: { fromStatus: string; toStatus: string; actor: string }) => [
              row.fromStatus,
              row.toStatus,
              row.actor,
            ]),
        ).toEqual([
          ["pending", "dispatched", "e2e-admin@example.test"],
          ["pending", "awaiting_approval", "e2e-admin@example.test"],
          ["awaiting_approval", "dispatched", "e2e-operator@example.test"],
        ]);

        // The tenant: both joined the group, only after the approval.
        expect(allStaffMembers().sort()).toEqual(
          [
            "migration.admin@fabrikam.example",
            "adele.vance.contoso@fabrikam.example",
            "megan.bowen.contoso@fabrikam.example",
          ]
            .map(idOf)
            .sort(),
        );

        // Paced all along: seven jobs (3 + 4) counted, at /api/worker/pacing and at /metrics.
        const pacing = await eventually(workerPacing, (p) => p.jobStarts >= 7, "seven job starts counted");
        expect(pacing.startRate).toEqual({ current: rateLimit, cap: rateLimit });
        // The calls in flight per API are capped too, and no call is under way any more.
        expect(pacing.apis).toEqual([
          { api: "graph", inFlight: 0, waiting: 0, limit: { current: 2, cap: 2 }, throttledCalls: 0 },
          { api: "exchange", inFlight: 0, waiting: 0, limit: { current: 1, cap: 1 }, throttledCalls: 0 },
        ]);
        const metrics = await (await fetch(`${system.apiUrl}/metrics`)).text();
        expect(metrics).toContain(`matoolkit_worker_job_start_rate_cap{worker_id="worker-01"} ${rateLimit}`);
        const startsAtMetrics = /^matoolkit_worker_job_starts_total\{worker_id="worker-01"\} (\d+)$/m.exec(
          metrics,
        );
        expect(Number(startsAtMetrics?.[1])).toBeGreaterThanOrEqual(7);
      });

      /** A seeded user's object id, by UPN: group members are ids. */
      function idOf(upn: string): string {
        return tenant.state.findUser(upn, "primary")!.id;
      }
    },
  );
}
