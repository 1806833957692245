import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alertPayload } from "@matoolkit/commands";
import {
  deleteWebhook,
  insertWebhook,
  listDeliveries,
  type Alert,
  type NotificationDelivery,
} from "@matoolkit/db";
import {
  notificationMessageTypes,
  notificationPayloadSchema,
  routingProperties,
  topics,
  type NotificationType,
} from "@matoolkit/domain";
import {
  outboundPolicy,
  parseAllowedDestinations,
  SecretKeyring,
  secretKeyOf,
  type Resolver,
} from "@matoolkit/platform";
import { createLogger } from "@matoolkit/runtime";
import { checkBatchCompletion, checkPhaseCompletion } from "../completion.ts";
import { eventually, membersWith, seedBatch, startHarness, type Harness } from "../../test/test-harness.ts";
import { batchStatus } from "../../test/test-queries.ts";
import { oneFailsRunbook, runBatchToEnd } from "../../test/notification-scenarios.ts";
import { handleNotificationMessage, type DeliverySettings } from "./notifier.ts";
import { verifyWebhookSignature } from "./signature.ts";

/**
 * Issue 12 notifications end to end: transitions queue notifications, the notifier fans them out
 * to webhooks and POSTs them, signed, to a real HTTP receiver; failures are retried with backoff
 * (short here) and given up, while the batch goes on.
 */
interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

let h: Harness;
let receiver: Server;
let base: string;
let port: number;
let deadUrl: string;
const received: Received[] = [];
const SECRET = "test-secret-of-32-bytes-base64url-xx";
const ALL: NotificationType[] = [
  "batch.completed",
  "batch.failed",
  "phase.completed",
  "phase.failed",
  "member.failed",
];

/**
 * Test DNS: `receiver.test` is the loopback receiver, allowed by name as an operator would with
 * MATOOLKIT_WEBHOOK_ALLOWED_HOSTS (test configuration, not a bypass of the policy);
 * `late.example.test` also resolves to loopback but is not allowed; `rebind.test` answers an
 * allowed address (127.0.0.2, where nothing listens) first and the receiver's address after.
 */
const lookups = new Map<string, number>();
const testResolver: Resolver = async (hostname) => {
  const count = (lookups.get(hostname) ?? 0) + 1;
  lookups.set(hostname, count);
  if (hostname === "receiver.test" || hostname === "late.example.test")
    return [{ address: "127.0.0.1", family: 4 }];
  if (hostname === "rebind.test") return [{ address: count === 1 ? "127.0.0.2" : "127.0.0.1", family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
};

beforeAll(async () => {
  h = await startHarness({
    notifier: {
      retryDelaysMs: [50, 100, 150],
      jitter: 0,
      timeoutMs: 5_000,
      outbound: outboundPolicy({
        allowed: parseAllowedDestinations(["receiver.test", "127.0.0.2/32"]),
        resolve: testResolver,
      }),
    },
  });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      if (req.url?.startsWith("/redirect")) {
        res.writeHead(307, { location: `${base}/redirected` }).end();
        return;
      }
      const status = req.url?.startsWith("/fail") ? 500 : req.url?.startsWith("/gone") ? 410 : 204;
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  port = (receiver.address() as AddressInfo).port;
  base = `http://receiver.test:${port}`;
  // A port nobody listens on: connection refused.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  deadUrl = `http://receiver.test:${(closed.address() as AddressInfo).port}/hook`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
});

afterAll(async () => {
  await h?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

function webhook(url: string, runbookName: string | null, events: readonly string[] = ALL) {
  return insertWebhook(h.db, {
    url,
    runbookName,
    events,
    sealedSecret: h.secrets.seal(SECRET),
    createdBy: "test",
  });
}

const deliveriesOf = (webhookId: number) => listDeliveries(h.db, webhookId, { limit: 100 });

async function settled(webhookId: number, count: number): Promise<NotificationDelivery[]> {
  return eventually(
    () => deliveriesOf(webhookId),
    (rows) =>
      rows.length === count && rows.every((row) => row.status === "delivered" || row.status === "gave_up"),
    `${count} deliveries of webhook ${webhookId} to settle`,
  );
}

/** A fan-out sends nothing itself: these are never used. */
const unusedSettings: DeliverySettings = {
  retryDelaysMs: [],
  timeoutMs: 1,
  jitter: 0,
  random: () => 0,
  outbound: outboundPolicy({ resolve: () => Promise.reject(new Error("a fan-out sends nothing")) }),
  secrets: undefined,
  now: () => new Date(),
  signal: new AbortController().signal,
};

const requestsTo = (path: string) => received.filter((request) => request.path === path);

describe("webhook notifications", () => {
  it("POSTs member.failed, phase.completed and batch.completed, signed, in the documented schema, without member data", async () => {
    const batch = await seedBatch(
      h.db,
      oneFailsRunbook,
      membersWith(3, (index) => ({ Fails: index === 1 ? 1 : 0 })),
    );
    // Issue 31: every payload names the batch's change ticket and its initiator.
    await h.db
      .updateTable("batches")
      .set({ externalRef: "CHG-WEBHOOK-1", createdBy: "alice@fabrikam.example" })
      .where("id", "=", batch.batchId)
      .execute();
    const global = await webhook(`${base}/global`, null);
    try {
      await runBatchToEnd(h, batch);
      const rows = await settled(global.id, 3);
      // One notification message per occurrence, fanned out independently: phase.completed and
      // batch.completed may be recorded in either order (the receiver orders by occurredAt).
      expect(
        rows
          .map((row) => [row.event, row.status, row.attempt, row.httpStatus])
          .sort(([a], [b]) => String(a).localeCompare(String(b))),
      ).toEqual([
        ["batch.completed", "delivered", 1, 204],
        ["member.failed", "delivered", 1, 204],
        ["phase.completed", "delivered", 1, 204],
      ]);
      const requests = requestsTo("/global");
      expect(requests).toHaveLength(3);
      for (const request of requests) {
        const timestamp = String(request.headers["x-matoolkit-timestamp"]);
        const signature = String(request.headers["x-matoolkit-signature"]);
        expect(verifyWebhookSignature(SECRET, timestamp, request.body, signature)).toBe(true);
        expect(verifyWebhookSignature("another-secret", timestamp, request.body, signature)).toBe(false);
        expect(request.headers["content-type"]).toBe("application/json");
        const payload = notificationPayloadSchema.parse(JSON.parse(request.body));
        expect(request.headers["x-matoolkit-event"]).toBe(payload.type);
        expect(rows.map((row) => String(row.id))).toContain(request.headers["x-matoolkit-delivery"]);
        // Member keys and data (UPNs here) never travel.
        expect(request.body).not.toContain("contoso");
      }
      const payloads = requests.map((request) => JSON.parse(request.body) as Record<string, unknown>);
      const byType = new Map(payloads.map((payload) => [payload.type, payload]));
      const batchRef = {
        id: batch.batchId,
        runbookName: batch.runbookName,
        runbookVersion: batch.runbookVersion,
        externalRef: "CHG-WEBHOOK-1",
        createdBy: "alice@fabrikam.example",
      };
      expect(byType.get("member.failed")).toMatchObject({
        schemaVersion: 1,
        batch: batchRef,
        member: { id: batch.members[1]!.id, stepName: "move", errorCode: "worker.error" },
      });
      expect(byType.get("phase.completed")).toMatchObject({
        batch: batchRef,
        phase: { id: batch.phases[0]!.id, name: "cutover" },
        outcome: "partially_succeeded",
        counts: { succeededMembers: 2, failedMembers: 1 },
      });
      expect(byType.get("batch.completed")).toMatchObject({
        batch: batchRef,
        outcome: "partially_succeeded",
        counts: { succeededMembers: 2, failedMembers: 1 },
      });
    } finally {
      await deleteWebhook(h.db, global.id, { by: "test", at: new Date() });
    }
  });

  it("retries a dead endpoint and a 500 with backoff, then gives up, while the batch and a healthy webhook are unaffected", async () => {
    const batch = await seedBatch(
      h.db,
      oneFailsRunbook,
      membersWith(1, () => ({ Fails: 0 })),
    );
    const dead = await webhook(deadUrl, batch.runbookName, ["batch.completed"]);
    const failing = await webhook(`${base}/fail`, batch.runbookName, ["batch.completed"]);
    const healthy = await webhook(`${base}/healthy`, batch.runbookName, ["batch.completed"]);
    await runBatchToEnd(h, batch);
    expect(await batchStatus(h.db, batch.batchId)).toBe("completed");
    const [healthyRow] = await settled(healthy.id, 1);
    expect(healthyRow).toMatchObject({ status: "delivered", attempt: 1 });

    const [deadRow] = await settled(dead.id, 1);
    expect(deadRow).toMatchObject({
      status: "gave_up",
      attempt: 4,
      httpStatus: null,
      errorCode: "webhook.unreachable",
    });
    expect(deadRow!.attempts.map((attempt) => attempt.errorCode)).toEqual(
      Array(4).fill("webhook.unreachable"),
    );
    const [failingRow] = await settled(failing.id, 1);
    expect(failingRow).toMatchObject({
      status: "gave_up",
      attempt: 4,
      httpStatus: 500,
      errorCode: "webhook.http_5xx",
    });
    // Backoff: each attempt waited at least its delay (50, 100, 150 ms) after the one before.
    const times = failingRow!.attempts.map((attempt) => Date.parse(attempt.at));
    const gaps = times.slice(1).map((time, index) => time - times[index]!);
    gaps.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual([50, 100, 150][index]!));
    // Every attempt of one delivery carries the same delivery id (receivers dedupe on it).
    const attempts = requestsTo("/fail");
    expect(attempts).toHaveLength(4);
    expect(new Set(attempts.map((request) => request.headers["x-matoolkit-delivery"]))).toEqual(
      new Set([String(failingRow!.id)]),
    );
  });

  it("410 Gone is not retried", async () => {
    const batch = await seedBatch(
      h.db,
      oneFailsRunbook,
      membersWith(1, () => ({ Fails: 0 })),
    );
    const gone = await webhook(`${base}/gone`, batch.runbookName, ["batch.completed"]);
    await runBatchToEnd(h, batch);
    const [row] = await settled(gone.id, 1);
    expect(row).toMatchObject({ status: "gave_up", attempt: 1, httpStatus: 410, errorCode: "webhook.gone" });
  });

  it("sends only the subscribed events of the webhook's runbook, and never twice for one occurrence", async () => {
    const batch = await seedBatch(
      h.db,
      oneFailsRunbook,
      membersWith(2, () => ({ Fails: 0 })),
    );
    const other = await seedBatch(
      h.db,
      oneFailsRunbook,
      membersWith(1, () => ({ Fails: 0 })),
    );
    const scoped = await webhook(`${base}/scoped`, batch.runbookName, ["phase.completed", "member.failed"]);
    await runBatchToEnd(h, batch);
    await runBatchToEnd(h, other);
    const [row] = await settled(scoped.id, 1);
    expect(row).toMatchObject({ event: "phase.completed", status: "delivered" });
    // A batch the scheduler created has no initiator: createdBy is null, as batches.created_by.
    expect(row!.payload).toMatchObject({ batch: { id: batch.batchId, createdBy: null } });

    // A duplicate completion check changes nothing and notifies nothing.
    expect(await checkPhaseCompletion(h.db, batch.phases[0]!.id)).toBeUndefined();
    expect(await checkBatchCompletion(h.db, batch.batchId)).toBe(false);
    // The notification message delivered again (past the bus's dedupe window, say) fans out to
    // nothing new: one delivery per (webhook, notification).
    await handleNotificationMessage(
      { db: h.db, logger: createLogger({ level: "silent", name: "test" }), settings: unusedSettings },
      {
        id: `again-${row!.notificationId}`,
        topic: topics.notifications,
        properties: { [routingProperties.messageType]: notificationMessageTypes.notification },
        body: row!.payload,
        deliveryCount: 2,
      },
    );
    expect(await deliveriesOf(scoped.id)).toHaveLength(1);
    expect(requestsTo("/scoped")).toHaveLength(1);
  });
});

describe("deliveries under the outbound policy (issue 25)", () => {
  const oneMember = () =>
    seedBatch(
      h.db,
      oneFailsRunbook,
      membersWith(1, () => ({ Fails: 0 })),
    );

  it("refuses at delivery a host that resolves to loopback, and a loopback address stored before the check; the log says only unreachable, as for a closed port", async () => {
    const batch = await oneMember();
    const late = await webhook(`http://late.example.test:${port}/late`, batch.runbookName, [
      "batch.completed",
    ]);
    const literal = await webhook(`http://127.0.0.1:${port}/literal`, batch.runbookName, ["batch.completed"]);
    const dead = await webhook(deadUrl, batch.runbookName, ["batch.completed"]);
    await runBatchToEnd(h, batch);
    const [lateRow] = await settled(late.id, 1);
    const [literalRow] = await settled(literal.id, 1);
    const [deadRow] = await settled(dead.id, 1);
    for (const row of [lateRow!, literalRow!]) {
      expect(row).toMatchObject({ status: "gave_up", httpStatus: null, errorCode: "webhook.unreachable" });
    }
    // A refused address and a closed port look the same to whoever reads the delivery log.
    const outcome = (row: NotificationDelivery) => row.attempts.map((a) => [a.httpStatus, a.errorCode]);
    expect(outcome(lateRow!)).toEqual(outcome(deadRow!));
    expect(outcome(literalRow!)).toEqual(outcome(deadRow!));
    expect(requestsTo("/late")).toHaveLength(0);
    expect(requestsTo("/literal")).toHaveLength(0);
  });

  it("does not follow a redirect: a 3xx is a failed delivery and its target gets nothing", async () => {
    const batch = await oneMember();
    const redirecting = await webhook(`${base}/redirect`, batch.runbookName, ["batch.completed"]);
    await runBatchToEnd(h, batch);
    const [row] = await settled(redirecting.id, 1);
    expect(row).toMatchObject({ status: "gave_up", httpStatus: 307, errorCode: "webhook.redirect" });
    expect(requestsTo("/redirect")).toHaveLength(4);
    expect(requestsTo("/redirected")).toHaveLength(0);
  });

  it("connects to the address it checked: a rebinding name (allowed address first, the receiver's after) never reaches the receiver", async () => {
    const batch = await oneMember();
    lookups.delete("rebind.test");
    const rebinding = await webhook(`http://rebind.test:${port}/rebind`, batch.runbookName, [
      "batch.completed",
    ]);
    await runBatchToEnd(h, batch);
    const [row] = await settled(rebinding.id, 1);
    expect(row).toMatchObject({ status: "gave_up", httpStatus: null, errorCode: "webhook.unreachable" });
    // One resolution per attempt, none by the connection itself.
    expect(lookups.get("rebind.test")).toBe(4);
    expect(requestsTo("/rebind")).toHaveLength(0);
  });

  it("a deleted webhook gets no deliveries; its history stays", async () => {
    const batch = await oneMember();
    const removed = await webhook(`${base}/removed`, batch.runbookName, ["batch.completed"]);
    expect(await deleteWebhook(h.db, removed.id, { by: "test", at: new Date() })).toBe(true);
    const kept = await webhook(`${base}/kept`, batch.runbookName, ["batch.completed"]);
    await runBatchToEnd(h, batch);
    await settled(kept.id, 1);
    expect(await deliveriesOf(removed.id)).toHaveLength(0);
    expect(requestsTo("/removed")).toHaveLength(0);
  });

  it("sends nothing when the secret was sealed with a key this process does not know, and says so", async () => {
    const batch = await oneMember();
    const foreign = new SecretKeyring(secretKeyOf(randomBytes(32)));
    const hook = await insertWebhook(h.db, {
      url: `${base}/foreign-key`,
      runbookName: batch.runbookName,
      events: ["batch.completed"],
      sealedSecret: foreign.seal(SECRET),
      createdBy: "test",
    });
    await runBatchToEnd(h, batch);
    const [row] = await settled(hook.id, 1);
    expect(row).toMatchObject({
      status: "gave_up",
      httpStatus: null,
      errorCode: "webhook.secret_unavailable",
    });
    expect(requestsTo("/foreign-key")).toHaveLength(0);
  });
});

describe("alert notifications (issue 31)", () => {
  const at = new Date("2030-06-01T12:00:00.000Z");
  const alertRow = (
    row: Partial<Alert> & Pick<Alert, "id" | "conditionId" | "subject" | "runbookName">,
  ): Alert => ({
    severity: "critical",
    batchId: null,
    details: {},
    raisedAt: at,
    resolvedAt: null,
    ...row,
  });
  const fanOut = (payload: unknown, id: string) =>
    handleNotificationMessage(
      { db: h.db, logger: createLogger({ level: "silent", name: "test" }), settings: unusedSettings },
      {
        id,
        topic: topics.notifications,
        properties: { [routingProperties.messageType]: notificationMessageTypes.notification },
        body: payload,
        deliveryCount: 1,
      },
    );

  it("an alert about no runbook goes to the global webhooks only, one about a runbook to its webhooks too, signed, in the alert shape", async () => {
    const global = await webhook(`${base}/alerts-all`, null, ["alert.raised", "alert.resolved"]);
    const scoped = await webhook(`${base}/alerts-hr`, "hr-alerts", ["alert.raised"]);
    const other = await webhook(`${base}/alerts-other`, "other-runbook", ["alert.raised"]);
    const deadLetters = alertPayload(
      alertRow({
        id: 9001,
        conditionId: "dead-letters",
        subject: "subscription:orchestrator-events/orchestrator",
        runbookName: null,
        details: { deadLetters: 2 },
      }),
      "alert.raised",
      1,
      at,
    );
    const failing = alertPayload(
      alertRow({
        id: 9002,
        conditionId: "source-failing",
        subject: "runbook:hr-alerts",
        runbookName: "hr-alerts",
      }),
      "alert.raised",
      2,
      at,
    );
    await fanOut(deadLetters, "alert-1");
    await fanOut(failing, "alert-2");
    expect((await settled(global.id, 2)).map((row) => [row.event, row.status])).toEqual([
      ["alert.raised", "delivered"],
      ["alert.raised", "delivered"],
    ]);
    expect((await settled(scoped.id, 1)).map((row) => row.notificationId)).toEqual([failing.id]);
    expect(await deliveriesOf(other.id)).toEqual([]);
    const requests = requestsTo("/alerts-all");
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      const timestamp = String(request.headers["x-matoolkit-timestamp"]);
      const signature = String(request.headers["x-matoolkit-signature"]);
      expect(verifyWebhookSignature(SECRET, timestamp, request.body, signature)).toBe(true);
    }
    const bodies = requests.map((request) => notificationPayloadSchema.parse(JSON.parse(request.body)));
    expect(bodies).toContainEqual({
      schemaVersion: 1,
      id: "alert.raised:9001:1",
      type: "alert.raised",
      occurredAt: "2030-06-01T12:00:00.000Z",
      alert: {
        id: 9001,
        condition: "dead-letters",
        severity: "critical",
        summary: "Messages were dead-lettered",
        subject: "subscription:orchestrator-events/orchestrator",
        runbookName: null,
        batchId: null,
        details: { deadLetters: 2 },
        raisedAt: "2030-06-01T12:00:00.000Z",
        resolvedAt: null,
      },
    });
  });
});
