import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueLocalToken } from "@matoolkit/admin-api";
import { alertPayloadSchema, routingProperties, topics, type AlertPayload } from "@matoolkit/domain";
import { orchestratorEventsSubscription } from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import type { OpenedRuntime, RuntimeProfile } from "./runtime-profiles.ts";
import { startAll, type RunningSystem } from "../src/start-all.ts";
import { eventually } from "./test-support.ts";

/**
 * Alerts on the whole system (issue 31): a runbook whose csv source disappears fails tick after
 * tick until the scheduler's evaluator raises `source-failing` (event row, `alert.raised` webhook,
 * GET /api/alerts), and the source coming back resolves it (`alert.resolved`); dead letters the
 * same way. Each is raised once and resolved once although the evaluator runs every 5 s.
 */
export function alertScenarios(profile: RuntimeProfile): void {
  describe(`alerts (${profile.name} runtime)`, { timeout: 120_000 }, () => {
    let database: TestDatabase;
    let runtime: OpenedRuntime;
    let dir: string;
    let system: RunningSystem;
    let admin: string;
    let receiver: Server;
    const received: AlertPayload[] = [];

    const csvPath = () => join(dir, "sources", "members.csv");
    const writeMembers = () =>
      writeFileSync(
        csvPath(),
        `Upn,StartsAt\na@contoso.test,${new Date(Date.now() + 3_600_000).toISOString()}\n`,
      );

    beforeAll(async () => {
      database = await createTestDatabase();
      dir = mkdtempSync(join(tmpdir(), "matoolkit-alerts-"));
      mkdirSync(join(dir, "sources"));
      writeMembers();
      receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
          received.push(alertPayloadSchema.parse(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
      runtime = await profile.open();
      system = await startAll({
        ...(await runtime.nextStart()),
        DATABASE_URL: database.url,
        MATOOLKIT_DATA_DIR: join(dir, "data"),
        MATOOLKIT_CSV_DIR: join(dir, "sources"),
        PORT: "0",
        LOG_LEVEL: "silent",
        MATOOLKIT_SCHEDULER_TICK_SECONDS: "5",
        MATOOLKIT_ALERTS_EVALUATE_SECONDS: "5",
        // The receiver is on loopback: allowed as an operator allows an internal receiver (issue 25).
        MATOOLKIT_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
      });
      admin = await issueLocalToken({
        dataDir: join(dir, "data"),
        issuer: "matoolkit-local",
        audience: "api://matoolkit",
        roles: ["Admin"],
        name: "alerts@example.test",
        ttlSeconds: 600,
      });
    });

    afterAll(async () => {
      await system?.stop();
      await runtime?.close();
      await database?.drop();
      await new Promise<void>((resolve) =>
        receiver === undefined ? resolve() : receiver.close(() => resolve()),
      );
      rmSync(dir, { recursive: true, force: true });
    });

    async function api(method: string, path: string, body?: string, type?: string) {
      const headers: Record<string, string> = { authorization: `Bearer ${admin}` };
      if (type !== undefined) headers["content-type"] = type;
      const response = await fetch(`${system.apiUrl}/api${path}`, { method, headers, body });
      return { status: response.status, body: (await response.json()) as any };
    }

    const alertsOf = async (condition: string) =>
      (
        (await api("GET", "/alerts?state=all")).body as {
          condition: string;
          id: number;
          resolvedAt: string | null;
        }[]
      ).filter((alert) => alert.condition === condition);
    const alertEvents = (alertId: number) =>
      database.db
        .selectFrom("events")
        .select(["fromStatus", "toStatus"])
        .where("entity", "=", "alert")
        .where("entityId", "=", alertId)
        .orderBy("id")
        .execute();
    const webhooksFor = (alertId: number) =>
      received.filter((payload) => payload.alert.id === alertId).map((payload) => payload.type);

    it("a failing data source: raised once after three failed ticks, resolved once when it reads again", async () => {
      const hook = await api(
        "POST",
        "/webhooks",
        JSON.stringify({
          url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts`,
          events: ["alert.raised", "alert.resolved"],
        }),
        "application/json",
      );
      expect(hook.status).toBe(201);
      const yaml = `name: alerting-csv
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time_column: StartsAt
phases:
  - name: cutover
    offset: T-0
    steps:
      - name: echo
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
`;
      expect((await api("POST", "/runbooks", yaml, "application/yaml")).status).toBe(201);
      unlinkSync(csvPath());
      const enabled = await api(
        "PUT",
        "/runbooks/alerting-csv/automation",
        JSON.stringify({ enabled: true }),
        "application/json",
      );
      expect(enabled.status).toBe(200);

      const [open] = await eventually(
        async () =>
          (await api("GET", "/alerts")).body as { id: number; condition: string; subject: string }[],
        (alerts) => alerts.some((alert) => alert.condition === "source-failing"),
        "the failing source to raise an alert",
      );
      expect(open).toMatchObject({
        condition: "source-failing",
        subject: "runbook:alerting-csv",
        severity: "critical",
      });
      await eventually(
        async () => webhooksFor(open!.id),
        (types) => types.length === 1,
        "alert.raised to reach the webhook",
      );

      writeMembers();
      await eventually(
        () => alertsOf("source-failing"),
        (alerts) => alerts.length === 1 && alerts[0]!.resolvedAt !== null,
        "the source reading again to resolve the alert",
      );
      await eventually(
        async () => webhooksFor(open!.id),
        (types) => types.length === 2,
        "alert.resolved to reach the webhook",
      );
      // Two more evaluations: nothing raised or resolved twice.
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      expect(await alertsOf("source-failing")).toHaveLength(1);
      expect(webhooksFor(open!.id)).toEqual(["alert.raised", "alert.resolved"]);
      expect(await alertEvents(open!.id)).toEqual([
        { fromStatus: null, toStatus: "open" },
        { fromStatus: "open", toStatus: "resolved" },
      ]);
    });

    it("dead letters: a malformed message dead-lettered raises the alert; resolved once it leaves the window", async () => {
      // Dead-lettered on its first delivery (a malformed body cannot be repaired by retrying): into
      // the embedded bus's .dlq queue, or the Dapr adapter's bus_dead_letters.
      await system.platform.bus.publish({
        id: `malformed-${Date.now()}`,
        topic: topics.orchestratorEvents,
        properties: { [routingProperties.messageType]: "phase-due" },
        body: { BatchId: "not-a-number", PhaseName: "cutover" },
      });
      const [alert] = await eventually(
        () => alertsOf("dead-letters"),
        (alerts) => alerts.length === 1,
        "the dead letter to raise an alert",
      );
      expect(alert).toMatchObject({
        subject: `subscription:${topics.orchestratorEvents}/${orchestratorEventsSubscription.name}`,
        details: { deadLetters: 1 },
        resolvedAt: null,
      });
      await eventually(
        async () => webhooksFor(alert!.id),
        (types) => types.length === 1,
        "alert.raised to reach the webhook",
      );
      // Two days later, as far as the window is concerned.
      await sql`DO $$ BEGIN
          UPDATE bus_dead_letters SET dead_lettered_at = now() - interval '2 days';
          IF to_regclass('pgboss.job') IS NOT NULL THEN
            UPDATE pgboss.job SET created_on = now() - interval '2 days' WHERE name LIKE '%.dlq';
          END IF;
        END $$`.execute(database.db);
      await eventually(
        async () => webhooksFor(alert!.id),
        (types) => types.length === 2,
        "alert.resolved to reach the webhook",
      );
      expect(webhooksFor(alert!.id)).toEqual(["alert.raised", "alert.resolved"]);
      expect((await alertsOf("dead-letters"))[0]!.resolvedAt).not.toBeNull();
      expect(await alertEvents(alert!.id)).toEqual([
        { fromStatus: null, toStatus: "open" },
        { fromStatus: "open", toStatus: "resolved" },
      ]);
    });
  });
}
