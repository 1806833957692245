import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueLocalToken } from "@matoolkit/admin-api";
import {
  loadTenantSeed,
  redeemInvitations,
  startSimulatedTenant,
  type SimulatedTenant,
} from "@matoolkit/simulated-tenant";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import type { OpenedRuntime, RuntimeProfile } from "./runtime-profiles.ts";
import { startAll, type RunningSystem } from "../src/start-all.ts";
import { batchStepsInRunbookOrder, eventually, examplePath, exampleText } from "./test-support.ts";

const waveGroupId = "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

/**
 * The simulated tenant's profile for the rehearsal: `default` is the real service's behaviour
 * with a short replication delay; `chaos` adds replicas that flap for 400 ms after each write, a
 * write replica that lags new objects and Exchange's per-tenant concurrency refusals, with seeded
 * randomness (libs/simulated-tenant behaviours.ts). Both must end with the same outcomes.
 */
export type RehearsalTenantProfile = "default" | "chaos";

/** Any fixed seed: a failing chaos run can be replayed with the same draws. */
export const chaosRandomSeed = 20_261_126;

/**
 * A real migration runbook (examples/contoso-to-fabrikam.yaml) through the whole system and the
 * worker's standard library, against the simulated tenant, with replication delay and throttling
 * switched on as a real tenant would have them. One member's staged account carries
 * another employee id, so his pre-check fails and the rollback takes him out of the wave group.
 */
export function standardLibraryScenarios(
  profile: RuntimeProfile,
  tenantProfile: RehearsalTenantProfile = "default",
): void {
  describe(
    `contoso-to-fabrikam on the simulated tenant (${profile.name} runtime${tenantProfile === "chaos" ? ", chaos profile" : ""})`,
    { timeout: 180_000 },
    () => {
      let database: TestDatabase;
      let runtime: OpenedRuntime;
      let system: RunningSystem;
      let tenant: SimulatedTenant;
      let dataDir: string;
      let admin: string;

      beforeAll(async () => {
        database = await createTestDatabase();
        dataDir = mkdtempSync(join(tmpdir(), "matoolkit-e2e-"));
        const seed = await loadTenantSeed(examplePath("fabrikam-tenant.json"));
        tenant = await startSimulatedTenant(
          tenantProfile === "chaos"
            ? { seed, profile: "chaos", randomSeed: chaosRandomSeed }
            : { seed, replicationDelayMs: 150 },
        );
        // Under chaos, two concurrency refusals for certain, besides the profile's random ones.
        if (tenantProfile === "chaos") tenant.exchangeConcurrency.arm(2);
        // Throttling the worker's retry loop has to absorb. Armed, not a random rate: a run of 5
        // refusals for one step (its maxAttempts) is possible at any rate, and would fail the
        // step for a reason this test is not about. 2 + 2 refusals are absorbed whichever steps
        // they land on; Retry-After 0 keeps the test fast.
        tenant.faults.arm({ api: "graph", count: 2, retryAfterSeconds: 0 });
        tenant.faults.arm({ api: "exchange", count: 2, retryAfterSeconds: 0 });
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
        });
        admin = await issueLocalToken({
          dataDir,
          issuer: "matoolkit-local",
          audience: "api://matoolkit",
          roles: ["Admin"],
          name: "e2e-admin@example.test",
          ttlSeconds: 600,
        });
      });

      afterAll(async () => {
        await system?.stop();
        await runtime?.close();
        await tenant?.close();
        await database?.drop();
        rmSync(dataDir, { recursive: true, force: true });
      });

      async function api(method: string, path: string, body?: { text: string; type: string }) {
        const headers: Record<string, string> = { authorization: `Bearer ${admin}` };
        if (body !== undefined) headers["content-type"] = body.type;
        const response = await fetch(`${system.apiUrl}/api${path}`, { method, headers, body: body?.text });
        return { status: response.status, body: (await response.json()) as any };
      }

      it("migrates two members, stops the one whose pre-check fails, and leaves the tenant as planned", async () => {
        const published = await api("POST", "/runbooks", {
          text: exampleText("contoso-to-fabrikam.yaml"),
          type: "application/yaml",
        });
        expect(published.status).toBe(201);
        const created = await api("POST", "/batches?runbook=contoso-to-fabrikam", {
          text: exampleText("contoso-to-fabrikam.csv"),
          type: "text/csv",
        });
        expect(created.status).toBe(201);
        const id = created.body.id as number;
        // No init steps: the first advance starts the first phase.
        for (const phase of ["pre-checks", "prepare", "cutover"]) {
          // Between prepare and cutover the invited users redeem their invitations (no Graph API
          // does it; the simulator stands in for them): a pending one cannot be converted.
          if (phase === "cutover") expect(redeemInvitations(tenant.state)).toBe(2);
          const advanced = await api("POST", `/batches/${id}/advance`);
          expect(advanced.body).toMatchObject({ action: "phase", phaseName: phase });
          await eventually(
            () => api("GET", `/batches/${id}`).then((r) => r.body),
            (b) => b.phases.find((p: { phaseName: string }) => p.phaseName === phase).status !== "dispatched",
            `phase ${phase} to finish`,
          );
        }
        const batch = await eventually(
          () => api("GET", `/batches/${id}`).then((r) => r.body),
          (b) => b.status === "completed" || b.status === "failed",
          "batch to end",
        );
        expect(batch.status).toBe("completed");

        const { db } = database;
        const members = await db
          .selectFrom("batchMembers")
          .select(["id", "memberKey", "status"])
          .where("batchId", "=", id)
          .orderBy("id")
          .execute();
        expect(members.map((m) => [m.memberKey, m.status])).toEqual([
          ["adele.vance@contoso.example", "active"],
          ["megan.bowen@contoso.example", "active"],
          ["isaiah.langer@contoso.example", "failed"],
        ]);
        const steps = await batchStepsInRunbookOrder(db, id);
        const isaiah = members[2]!.id;
        // Every step of the two good members succeeded: 3 + 4 + 5 each.
        const others = steps.filter((s) => s.batchMemberId !== isaiah);
        expect(others).toHaveLength(2 * 12);
        expect(others.filter((s) => s.status !== "succeeded")).toEqual([]);
        const ofIsaiah = steps.filter((s) => s.batchMemberId === isaiah);
        expect(ofIsaiah[0]).toMatchObject({
          stepName: "check-target-account",
          status: "failed",
          errorCode: "check.mismatch",
        });
        expect(ofIsaiah[0]!.errorMessage).toContain("employeeId");
        // Pre-checks stop him before anything is written for him; the rest of his steps never ran.
        expect(new Set(ofIsaiah.slice(1).map((s) => s.status))).toEqual(new Set(["cancelled"]));

        // The tenant as the runbook meant to leave it.
        const user = (upn: string) => tenant.state.findUser(upn, "primary");
        for (const name of ["adele.vance", "megan.bowen"]) {
          const migrated = user(`${name}@fabrikam.example`);
          expect(migrated, `${name} renamed to the final UPN`).toMatchObject({
            userType: "Member",
            externalUserState: null,
            externalUserConvertedOn: expect.any(String),
          });
          expect(user(`${name}.contoso@fabrikam.example`)).toBeUndefined();
          const recipient = tenant.state.findRecipient(migrated!.id, "primary")!;
          expect(recipient.PrimarySmtpAddress).toBe(`${name}@fabrikam.example`);
          expect(recipient.ExternalEmailAddress?.toLowerCase()).toBe(`smtp:${name}@contoso.example`);
          expect(recipient.EmailAddresses).toEqual(
            expect.arrayContaining([`SMTP:${name}@fabrikam.example`, `smtp:${name}@contoso.example`]),
          );
          expect(
            recipient.EmailAddresses.some((a) => a.startsWith("X500:") && a.endsWith(`cn=${name}`)),
          ).toBe(true);
          // Every x500 of the source mailbox, not only its LegacyExchangeDN.
          expect(recipient.EmailAddresses).toContain(
            `X500:/o=Contoso/ou=First Administrative Group/cn=Recipients/cn=${name}`,
          );
        }
        const invitations = tenant.state.invitations.list("primary");
        expect(invitations).toHaveLength(2);
        expect(invitations.every((invitation) => !invitation.sendInvitationMessage)).toBe(true);
        const isaiahUser = user("isaiah.langer.contoso@fabrikam.example")!;
        const wave = tenant.state.groups.get(waveGroupId, "primary")!;
        expect(wave.members).not.toContain(isaiahUser.id);
        expect(wave.members).toHaveLength(2);
        // The only write that concerned Isaiah is the rollback's removal from the wave group.
        const recipientOfIsaiah = tenant.state.findRecipient(isaiahUser.id, "primary")!;
        expect(recipientOfIsaiah.ExchangeGuid).toBe("00000000-0000-0000-0000-000000000000");
        expect(isaiahUser.externalUserState).toBeNull();
        // The throttling happened, and no step failed for it (above).
        expect(tenant.faults.counts()).toMatchObject({ graphFaults: 2, exchangeFaults: 2 });
        if (tenantProfile === "chaos") expect(tenant.exchangeConcurrency.refused).toBeGreaterThanOrEqual(2);
      });
    },
  );
}
