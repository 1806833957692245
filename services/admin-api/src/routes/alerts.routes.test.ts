import { publishRunbook, raiseAlert, resolveAlert } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueLocalToken } from "../auth/index.ts";
import { startApiHarness, type ApiHarness } from "../../test/api-test-harness.ts";
import { alertSchema } from "./alerts.routes.ts";

/** GET /api/alerts (issue 31): open by default, `?state=all` with resolved ones, Reader and above. */
let harness: ApiHarness;
let openId: number;
let resolvedId: number;

beforeAll(async () => {
  harness = await startApiHarness();
  await publishRunbook(harness.db, {
    name: "hr-feed",
    yamlContent: "name: hr-feed\n",
    overdueBehavior: "rerun",
    rerunInit: false,
  });
  const at = new Date("2030-06-01T12:00:00.000Z");
  const resolved = await raiseAlert(
    harness.db,
    {
      conditionId: "dead-letters",
      severity: "critical",
      subject: "subscription:orchestrator-events/orchestrator",
      runbookName: null,
      batchId: null,
      details: { deadLetters: 1 },
    },
    at,
  );
  resolvedId = resolved!.id;
  await resolveAlert(harness.db, resolvedId, new Date(at.getTime() + 60_000));
  const open = await raiseAlert(
    harness.db,
    {
      conditionId: "source-failing",
      severity: "critical",
      subject: "runbook:hr-feed",
      runbookName: "hr-feed",
      batchId: null,
      details: { consecutiveFailures: 3, reasonCode: "datasource.unreachable" },
    },
    new Date(at.getTime() + 120_000),
  );
  openId = open!.id;
});

afterAll(async () => {
  await harness?.stop();
});

describe("GET /api/alerts", () => {
  it("lists the open alerts by default, in the documented shape", async () => {
    const response = await harness.request("GET", "/alerts", { token: harness.readerToken });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual([
      {
        id: openId,
        condition: "source-failing",
        severity: "critical",
        summary: "A runbook's data source failed several scheduler ticks in a row",
        subject: "runbook:hr-feed",
        runbookName: "hr-feed",
        batchId: null,
        details: { consecutiveFailures: 3, reasonCode: "datasource.unreachable" },
        raisedAt: "2030-06-01T12:02:00.000Z",
        resolvedAt: null,
      },
    ]);
    for (const alert of response.body) alertSchema.parse(alert);
  });

  it("lists resolved ones too with state=all, newest first", async () => {
    const response = await harness.request("GET", "/alerts?state=all", { token: harness.operatorToken });
    expect(response.status).toBe(200);
    expect(
      response.body.map((alert: { id: number; resolvedAt: string | null }) => [alert.id, alert.resolvedAt]),
    ).toEqual([
      [openId, null],
      [resolvedId, "2030-06-01T12:01:00.000Z"],
    ]);
  });

  it("refuses an unknown state", async () => {
    expect((await harness.request("GET", "/alerts?state=closed")).status).toBe(400);
  });

  it("answers Reader, Operator and Admin; 401 without a token, 403 for a token without a role", async () => {
    for (const token of [harness.readerToken, harness.operatorToken, harness.adminToken])
      expect((await harness.request("GET", "/alerts", { token })).status).toBe(200);
    expect((await harness.request("GET", "/alerts", { token: null })).status).toBe(401);
    const noRole = await issueLocalToken({
      dataDir: harness.dataDir,
      issuer: "matoolkit-local",
      audience: "api://matoolkit",
      roles: [],
      name: "nobody@example.test",
      ttlSeconds: 600,
    });
    expect((await harness.request("GET", "/alerts", { token: noRole })).status).toBe(403);
  });
});
