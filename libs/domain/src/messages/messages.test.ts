import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import type { OrchestratorEventType } from "./orchestrator-events.ts";
import {
  isOrchestratorEventType,
  orchestratorEventSchemas,
  orchestratorEventTypes,
} from "./orchestrator-events.ts";
import { workerJobMessageSchema, workerResultMessageSchema } from "./worker-messages.ts";

/** The example payloads of 000 "Message Types", copied verbatim into fixtures/. */
function fixture(name: string): { text: string; json: unknown } {
  const text = readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), "utf8");
  return { text, json: JSON.parse(text) };
}

/** Parse, then serialize as a publisher would: key order and casing must survive unchanged. */
function expectRoundTrip(schema: z.ZodType, name: string): void {
  const { text, json } = fixture(name);
  const parsed = schema.parse(json);
  expect(JSON.stringify(parsed)).toBe(JSON.stringify(JSON.parse(text)));
}

const orchestratorFixtures: ReadonlyArray<readonly [OrchestratorEventType, string]> = [
  ["batch-init", "batch-init"],
  ["phase-due", "phase-due"],
  ["member-added", "member-added"],
  ["member-removed", "member-removed"],
  ["poll-check", "poll-check"],
  ["retry-check", "retry-check"],
];

describe("wire format golden tests (000 Message Types)", () => {
  it.each(orchestratorFixtures)("%s: the spec example parses and round-trips byte for byte", (type, name) => {
    expectRoundTrip(orchestratorEventSchemas[type], name);
  });

  it("WorkerJobMessage: the spec example parses and round-trips byte for byte", () => {
    expectRoundTrip(workerJobMessageSchema, "worker-job");
  });

  it("WorkerResultMessage success: the spec example parses and round-trips byte for byte", () => {
    expectRoundTrip(workerResultMessageSchema, "worker-result-success");
    const parsed = workerResultMessageSchema.parse(fixture("worker-result-success").json);
    expect(parsed.Result).toEqual({ complete: true, data: { UserId: "abc-123" } });
    expect(parsed.Error).toBeNull();
  });

  it("WorkerResultMessage failure: the spec's Error object parses and round-trips byte for byte", () => {
    expectRoundTrip(workerResultMessageSchema, "worker-result-failure");
    const parsed = workerResultMessageSchema.parse(fixture("worker-result-failure").json);
    expect(parsed.Status).toBe("Failure");
    expect(parsed.Error).toEqual({
      Message: "User not found",
      Type: "Microsoft.Graph.ServiceException",
      IsThrottled: false,
      Attempts: 1,
    });
  });

  it("WorkerResultMessage: an Error without the optional IsThrottled/Attempts gains no keys on re-serialization", () => {
    // Byte compatibility means parse + stringify adds nothing the sender did not send; defaults
    // belong where the values are read (`IsThrottled ?? false`), not in the wire schema.
    const body = {
      JobId: "step-123-attempt-1",
      Status: "Failure",
      Error: { Message: "User not found" },
      CorrelationData: { StepExecutionId: 123, IsInitStep: false, RunbookName: "r", RunbookVersion: 1 },
    };
    expect(JSON.stringify(workerResultMessageSchema.parse(body))).toBe(JSON.stringify(body));
  });

  it("WorkerResultMessage: the Status casing is part of the contract", () => {
    const { json } = fixture("worker-result-success");
    expect(workerResultMessageSchema.safeParse({ ...(json as object), Status: "success" }).success).toBe(
      false,
    );
  });

  it("tolerates extra body fields that older senders add", () => {
    const { json } = fixture("batch-init");
    const parsed = orchestratorEventSchemas["batch-init"].safeParse({
      ...(json as object),
      MemberCount: 150,
    });
    expect(parsed.success).toBe(true);
  });
});

/** 001's camelCase bodies: 000 wins, so they must be rejected rather than half-read. */
const camelCaseBodies: ReadonlyArray<readonly [OrchestratorEventType, Record<string, unknown>, string[]]> = [
  [
    "batch-init",
    { messageType: "batch-init", runbookName: "contoso-mailbox-migration", runbookVersion: 3, batchId: 42 },
    ["BatchId", "RunbookName", "RunbookVersion"],
  ],
  [
    "phase-due",
    {
      runbookName: "contoso-mailbox-migration",
      runbookVersion: 3,
      batchId: 42,
      phaseExecutionId: 108,
      phaseName: "x",
    },
    ["BatchId", "RunbookName", "RunbookVersion", "PhaseName", "PhaseExecutionId"],
  ],
  [
    "member-added",
    {
      runbookName: "r",
      runbookVersion: 3,
      batchId: 42,
      batchMemberId: 505,
      memberKey: "newuser@contoso.com",
    },
    ["BatchId", "MemberKey", "BatchMemberId"],
  ],
  [
    "member-removed",
    {
      runbookName: "r",
      runbookVersion: 3,
      batchId: 42,
      batchMemberId: 503,
      memberKey: "removeduser@contoso.com",
    },
    ["BatchId", "MemberKey", "BatchMemberId"],
  ],
  [
    "poll-check",
    { runbookName: "r", runbookVersion: 3, batchId: 42, stepExecutionId: 1042, stepName: "s", pollCount: 5 },
    ["StepExecutionId", "IsInitStep"],
  ],
  ["retry-check", { stepExecutionId: 1042, isInitStep: false }, ["StepExecutionId", "IsInitStep"]],
];

describe("camelCase bodies (001 style)", () => {
  it.each(camelCaseBodies)("%s: rejected, naming each missing PascalCase field", (type, body, missing) => {
    const result = orchestratorEventSchemas[type].safeParse(body);
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((issue) => issue.path.join(".")) ?? [];
    expect(paths.sort()).toEqual([...missing].sort());
    for (const field of missing) expect(result.error?.message).toContain(`"${field}"`);
  });

  it("a camelCase worker result is rejected, naming the missing fields", () => {
    const result = workerResultMessageSchema.safeParse({
      jobId: "j",
      status: "Success",
      correlationData: {},
    });
    expect(result.error?.issues.map((issue) => issue.path.join(".")).sort()).toEqual([
      "CorrelationData",
      "JobId",
      "Status",
    ]);
  });
});

describe("isOrchestratorEventType", () => {
  it("accepts exactly the six orchestrator-events types of 000 and the internal batch-changed and member-redriven", () => {
    const types = [
      "batch-init",
      "phase-due",
      "member-added",
      "member-removed",
      "poll-check",
      "retry-check",
      "batch-changed",
      "member-redriven",
    ];
    expect([...orchestratorEventTypes].sort()).toEqual([...types].sort());
    for (const type of types) expect(isOrchestratorEventType(type)).toBe(true);
  });

  it("rejects anything else, including worker messages, other casings and Object.prototype names", () => {
    for (const value of [
      undefined,
      "",
      "Batch-Init",
      "batch_init",
      "worker-job",
      "toString",
      "__proto__",
      "constructor",
    ]) {
      expect(isOrchestratorEventType(value)).toBe(false);
    }
  });
});

describe("oversized ids and names", () => {
  // An id that later fails a store's key check would be retried by the bus for minutes; refused
  // here, the consumer dead-letters it at once (found by the malformed-messages drill).
  it("refuses a worker job or result whose JobId, WorkerId or FunctionName is over 256 characters", () => {
    const job = fixture("worker-job").json as Record<string, unknown>;
    const long = "j".repeat(257);
    for (const field of ["JobId", "WorkerId", "FunctionName"]) {
      expect(workerJobMessageSchema.safeParse({ ...job, [field]: long }).success, field).toBe(false);
      expect(workerJobMessageSchema.safeParse({ ...job, [field]: long.slice(1) }).success, field).toBe(true);
    }
    const result = fixture("worker-result-success").json as Record<string, unknown>;
    expect(workerResultMessageSchema.safeParse({ ...result, JobId: long }).success).toBe(false);
  });

  it("refuses a member event whose MemberKey is over 512 characters", () => {
    const added = fixture("member-added").json as Record<string, unknown>;
    const schema = orchestratorEventSchemas["member-added"];
    expect(schema.safeParse({ ...added, MemberKey: "k".repeat(513) }).success).toBe(false);
    expect(schema.safeParse({ ...added, MemberKey: "k".repeat(512) }).success).toBe(true);
  });
});
