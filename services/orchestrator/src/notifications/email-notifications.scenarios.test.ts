import { dispatchPhase } from "@matoolkit/commands";
import { insertWebhook, listDeliveries, listPhases } from "@matoolkit/db";
import { startSimulatedTenant, type SimulatedTenant } from "@matoolkit/simulated-tenant";
import { createLogger } from "@matoolkit/runtime";
import { createTenantClients, tenantConfigFromEnv, type BuiltTenantClients } from "@matoolkit/worker";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  membersWith,
  runbookYaml,
  seedBatch,
  startHarness,
  type Harness,
  type SeededBatch,
} from "../../test/test-harness.ts";
import { oneFailsRunbook, runBatchToEnd } from "../../test/notification-scenarios.ts";

/**
 * Issue 31 item 7 end to end: with MATOOLKIT_NOTIFY_EMAIL on, a batch's end and an approval
 * request are mailed, once, to the initiator and the configured list through Graph sendMail, here
 * the simulated tenant's, reached with the worker's own Graph client; with it off, nothing is.
 * No webhook is registered: the email does not depend on one.
 */
const INITIATOR = "alice@fabrikam.example";
const LIST = ["ops-team@fabrikam.example"];
const SENDER = "matoolkit@fabrikam.example";

let tenant: SimulatedTenant;
let tenantClients: BuiltTenantClients;
let on: Harness;
let off: Harness;

beforeAll(async () => {
  tenant = await startSimulatedTenant({
    seed: {
      domains: ["fabrikam.example"],
      users: [{ id: "u-sender", userPrincipalName: SENDER, displayName: "matoolkit" }],
      recipients: [
        {
          Name: "matoolkit",
          RecipientTypeDetails: "SharedMailbox",
          PrimarySmtpAddress: SENDER,
          ExternalDirectoryObjectId: "u-sender",
        },
      ],
    },
  });
  const logger = createLogger({ level: "silent", name: "test" });
  tenantClients = await createTenantClients(
    tenantConfigFromEnv({ MATOOLKIT_TENANT: "simulated", MATOOLKIT_SIMULATED_TENANT_URL: tenant.url }),
    { logger },
  );
  on = await startHarness({ mail: { from: SENDER, to: LIST, graph: tenantClients.clients.graph } });
  off = await startHarness();
});

afterAll(async () => {
  await on?.stop();
  await off?.stop();
  await tenantClients?.close();
  await tenant?.close();
});

async function initiatedBy(h: Harness, batch: SeededBatch, createdBy: string | null): Promise<void> {
  await h.db.updateTable("batches").set({ createdBy }).where("id", "=", batch.batchId).execute();
}

const emailRows = (h: Harness, batchId: number) =>
  sql<{ event: string; status: string; recipients: number; http_status: number | null }>`
    SELECT event, status, recipients, http_status FROM notification_emails WHERE batch_id = ${batchId}`
    .execute(h.db)
    .then((result) => result.rows);

const mailsAbout = (batchId: number) =>
  tenant.state.sentMail().filter((mail) => mail.subject.includes(`atch ${batchId} `));

describe("email notifications on", () => {
  it("mails the batch's end once to the initiator and the configured list, without member data", async () => {
    const batch = await seedBatch(
      on.db,
      oneFailsRunbook,
      membersWith(3, (index) => ({ Fails: index === 1 ? 1 : 0 })),
    );
    await initiatedBy(on, batch, INITIATOR);
    await runBatchToEnd(on, batch);
    const [mail] = await eventually(
      async () => mailsAbout(batch.batchId),
      (mails) => mails.length === 1,
      "the batch-end email",
    );
    expect(mail).toMatchObject({
      from: SENDER,
      to: [INITIATOR, ...LIST],
      contentType: "text",
      saveToSentItems: false,
      subject: `[matoolkit] Batch ${batch.batchId} (${batch.runbookName}) completed: partially_succeeded`,
    });
    expect(mail!.content).toContain("Members succeeded: 2");
    expect(mail!.content).toContain("Members failed: 1");
    expect(mail!.content).toContain(`matoolkit batch show ${batch.batchId}`);
    // Member keys (UPNs at contoso) never travel.
    expect(JSON.stringify(mail)).not.toContain("contoso");
    // Recorded just after the tenant's 202.
    const recorded = await eventually(
      () => emailRows(on, batch.batchId),
      (rows) => rows.every((row) => row.status !== "sending"),
      "the email recorded",
    );
    expect(recorded).toEqual([{ event: "batch.completed", status: "sent", recipients: 2, http_status: 202 }]);
    // The tenant's change log says a mail went, not to whom.
    const change = tenant.state.changes().at(-1);
    expect(change).toMatchObject({ operation: "POST /v1.0/users/:id/sendMail", target: SENDER });
    expect(JSON.stringify(change)).not.toContain(INITIATOR);
  });

  it("a scheduler batch (no initiator) goes to the configured list only", async () => {
    const batch = await seedBatch(
      on.db,
      oneFailsRunbook,
      membersWith(1, () => ({ Fails: 0 })),
    );
    await initiatedBy(on, batch, null);
    await runBatchToEnd(on, batch);
    const [mail] = await eventually(
      async () => mailsAbout(batch.batchId),
      (mails) => mails.length === 1,
      "the batch-end email",
    );
    expect(mail!.to).toEqual(LIST);
  });

  it("mails an approval request, with how to decide", async () => {
    const gated = runbookYaml(`
phases:
  - name: cutover
    offset: T-0
    approval: required
    steps:
      - name: move
        worker_id: worker-01
        function: Test-Echo
        params:
          Value: "{{Upn}}"
`);
    const batch = await seedBatch(
      on.db,
      gated,
      membersWith(1, () => ({})),
    );
    await initiatedBy(on, batch, INITIATOR);
    const outcome = await on.db.transaction().execute(async (trx) => {
      const [phase] = await listPhases(trx, batch.batchId);
      return dispatchPhase(trx, {
        batchId: batch.batchId,
        runbookName: batch.runbookName,
        phase: phase!,
        reason: "advanced by operator",
        actor: INITIATOR,
      });
    });
    expect(outcome).toBe("awaiting_approval");
    const [mail] = await eventually(
      async () => mailsAbout(batch.batchId),
      (mails) => mails.length === 1,
      "the approval email",
    );
    expect(mail).toMatchObject({
      to: [INITIATOR, ...LIST],
      subject: `[matoolkit] Approval needed: batch ${batch.batchId} (${batch.runbookName}), phase cutover`,
    });
    expect(mail!.content).toContain("awaits approval");
    // Recorded just after the tenant's 202.
    const recorded = await eventually(
      () => emailRows(on, batch.batchId),
      (rows) => rows.every((row) => row.status !== "sending"),
      "the email recorded",
    );
    expect(recorded).toEqual([
      { event: "phase.awaiting_approval", status: "sent", recipients: 2, http_status: 202 },
    ]);
  });
});

describe("email notifications off (the default)", () => {
  it("mails nothing when a batch ends", async () => {
    const batch = await seedBatch(
      off.db,
      oneFailsRunbook,
      membersWith(1, () => ({ Fails: 0 })),
    );
    await initiatedBy(off, batch, INITIATOR);
    const before = tenant.state.sentMail().length;
    // A webhook on batch.completed: its delivery row shows the notifier has handled the batch end.
    const hook = await insertWebhook(off.db, {
      url: "http://127.0.0.1:9/hook",
      runbookName: batch.runbookName,
      events: ["batch.completed"],
      sealedSecret: off.secrets.seal("test-secret-of-32-bytes-base64url-xx"),
      createdBy: "test",
    });
    await runBatchToEnd(off, batch);
    await eventually(
      () => listDeliveries(off.db, hook.id, { limit: 10 }),
      (rows) => rows.length === 1,
      "the batch-end notification handled",
    );
    expect(await emailRows(off, batch.batchId)).toEqual([]);
    expect(tenant.state.sentMail()).toHaveLength(before);
  });
});
