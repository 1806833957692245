import { topics, type Topic } from "@matoolkit/domain";
import type { OutgoingMessage } from "@matoolkit/runtime";

/**
 * The malformed-messages drill's ammunition: for each topic, a seeded mix of messages no correct
 * sender would publish. Ids of real rows (a running, a completed and a cancelled batch) make the
 * "valid shape" kinds reach the handlers' database checks, not just their schema checks.
 */
export const malformedKinds = [
  "not-an-object",
  "missing-field",
  "wrong-type",
  "unknown-message-type",
  "huge-body",
  "unknown-ids",
  "finished-batch",
  "wrong-worker-id",
  "nul-characters",
] as const;
export type MalformedKind = (typeof malformedKinds)[number];

/** Real rows of one batch, read from the database after it was created. */
export interface BatchRows {
  readonly batchId: number;
  readonly phaseExecutionId: number;
  readonly memberIds: readonly number[];
  readonly memberKeys: readonly string[];
  readonly stepIds: readonly number[];
}

export interface CatalogueIds {
  readonly runbookName: string;
  readonly runbookVersion: number;
  readonly workerId: string;
  readonly running: BatchRows;
  readonly completed: BatchRows;
  readonly cancelled: BatchRows;
}

export interface MalformedMessage {
  readonly kind: MalformedKind;
  readonly message: OutgoingMessage;
}

/** Every drill message id starts so: its jobs and dead letters are told apart from the batch's. */
export const malformedIdPrefix = "malformed-";

const HUGE_CHARS = 256 * 1024;
/** Far above any id the drill's database hands out, and still a valid positive int. */
const UNKNOWN_ID_BASE = 900_000_000;

export function malformedMessages(
  topic: Topic,
  count: number,
  ids: CatalogueIds,
  random: () => number,
): MalformedMessage[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const unknownId = () => UNKNOWN_ID_BASE + Math.floor(random() * 1_000_000);
  const valid = (rows: BatchRows | undefined, realStep = false) =>
    validBody(topic, ids, rows, realStep, pick, unknownId);
  return Array.from({ length: count }, (_, index) => {
    const kind = malformedKinds[index % malformedKinds.length]!;
    const id = `${malformedIdPrefix}${topic}-${index}-${kind}`;
    const base = valid(undefined);
    let body: unknown = base.body;
    const properties: Record<string, string> = { ...base.properties };
    switch (kind) {
      case "not-an-object":
        body = pick(["not json {", 42, null, true, [base.body], "", [], -1.5]);
        break;
      case "missing-field": {
        const copy = { ...(base.body as Record<string, unknown>) };
        delete copy[pick(Object.keys(copy))];
        body = copy;
        break;
      }
      case "wrong-type": {
        const copy: Record<string, unknown> = { ...(base.body as Record<string, unknown>) };
        copy[pick(Object.keys(copy))] = pick(["12", -7, 0, 1.5, {}, [], false, "", null]);
        body = copy;
        break;
      }
      case "unknown-message-type":
        properties.MessageType = pick(["batch-explode", "", "Batch-Init", "__proto__", "x".repeat(300)]);
        body = { Unknown: true, Type: properties.MessageType };
        break;
      case "huge-body": {
        const copy: Record<string, unknown> = { ...(base.body as Record<string, unknown>) };
        copy[pick(Object.keys(copy))] = "h".repeat(HUGE_CHARS);
        body = copy;
        break;
      }
      case "unknown-ids":
        // Results: half of them name a real running step with a JobId it was never given.
        body = valid(random() < 0.5 ? ids.running : undefined, topic === topics.workerResults).body;
        break;
      case "finished-batch":
        body = valid(random() < 0.5 ? ids.completed : ids.cancelled, true).body;
        break;
      case "wrong-worker-id":
        // Half routed to no subscription (dropped at publish), half routed to ours but not for us.
        if (random() < 0.5) properties.WorkerId = "worker-drill-nobody";
        else if (topic === topics.workerJobs)
          body = { ...(base.body as object), WorkerId: "worker-drill-nobody" };
        else properties.WorkerId = `${ids.workerId}\u200b`;
        break;
      case "nul-characters":
        body = withNul(base.body, random);
        if (random() < 0.3) properties.MessageType = `${properties.MessageType ?? "x"}\u0000`;
        break;
      default: {
        const unreachable: never = kind;
        throw new Error(`unknown kind ${String(unreachable)}`);
      }
    }
    return { kind, message: { id, topic, body, properties } };
  });
}

function withNul(body: unknown, random: () => number): unknown {
  if (typeof body === "string") return `${body.slice(0, 3)}\u0000${body.slice(3)}`;
  if (Array.isArray(body)) return body.map((item) => withNul(item, random));
  if (body !== null && typeof body === "object") {
    return Object.fromEntries(
      Object.entries(body).map(([key, value]) => [
        random() < 0.1 ? `${key}\u0000` : key,
        withNul(value, random),
      ]),
    );
  }
  return body;
}

interface ValidBody {
  readonly body: Record<string, unknown>;
  readonly properties: Record<string, string>;
}

/**
 * A body of the right shape for the topic. `rows` absent: every id unknown; present: its ids.
 * `realStep` on a result: a real step with a JobId that step never had.
 */
function validBody(
  topic: Topic,
  ids: CatalogueIds,
  rows: BatchRows | undefined,
  realStep: boolean,
  pick: <T>(items: readonly T[]) => T,
  unknownId: () => number,
): ValidBody {
  const batchId = rows?.batchId ?? unknownId();
  const stepId = rows !== undefined && realStep && rows.stepIds.length > 0 ? pick(rows.stepIds) : unknownId();
  // A real member of the RUNNING batch would make member-removed a legitimate removal: never.
  const memberIndex =
    rows === undefined || rows === ids.running || rows.memberIds.length === 0
      ? -1
      : pick(rows.memberIds.map((_, i) => i));
  const correlation = {
    StepExecutionId: stepId,
    IsInitStep: false,
    RunbookName: ids.runbookName,
    RunbookVersion: ids.runbookVersion,
  };
  const jobId = `drill-forged-${unknownId()}`;
  switch (topic) {
    case topics.workerJobs:
      return {
        properties: { WorkerId: ids.workerId, MessageType: "worker-job" },
        body: {
          JobId: jobId,
          BatchId: batchId,
          WorkerId: ids.workerId,
          // Never the batch's Record-Step: a forged job must not add to the batch's side effects.
          FunctionName: pick(["Test-Echo", "Drill-No-Such-Function"]),
          Parameters: { Member: "forged@contoso.test", Step: "forged" },
          CorrelationData: correlation,
        },
      };
    case topics.workerResults:
      return {
        properties: { WorkerId: ids.workerId, MessageType: "worker-result" },
        body: {
          JobId: jobId,
          Status: pick(["Success", "Failure"]),
          ResultType: "Object",
          Result: { forged: true },
          Error: { Message: "forged failure", Type: "drill.forged", IsThrottled: false, Attempts: 1 },
          DurationMs: 5,
          Timestamp: new Date().toISOString(),
          CorrelationData: correlation,
        },
      };
    case topics.orchestratorEvents: {
      const memberId = memberIndex >= 0 ? rows!.memberIds[memberIndex]! : unknownId();
      const memberKey = memberIndex >= 0 ? rows!.memberKeys[memberIndex]! : "forged@contoso.test";
      const type = pick([
        "batch-init",
        "phase-due",
        "member-added",
        "member-removed",
        "poll-check",
        "retry-check",
        "batch-changed",
      ] as const);
      const bodies: Record<typeof type, Record<string, unknown>> = {
        "batch-init": { BatchId: batchId, RunbookName: ids.runbookName, RunbookVersion: ids.runbookVersion },
        "phase-due": {
          BatchId: batchId,
          RunbookName: ids.runbookName,
          RunbookVersion: ids.runbookVersion,
          PhaseName: "move",
          PhaseExecutionId:
            rows !== undefined && rows.phaseExecutionId > 0 ? rows.phaseExecutionId : unknownId(),
        },
        "member-added": { BatchId: batchId, MemberKey: memberKey, BatchMemberId: memberId },
        "member-removed": { BatchId: batchId, MemberKey: memberKey, BatchMemberId: memberId },
        "poll-check": { StepExecutionId: stepId, IsInitStep: false },
        "retry-check": { StepExecutionId: stepId, IsInitStep: false },
        "batch-changed": { BatchId: batchId },
      };
      return { properties: { MessageType: type }, body: bodies[type] };
    }
    case topics.notifications:
      // Issue 12's notifier: an attempt of a delivery that does not exist (acknowledged, nothing sent).
      return {
        properties: { MessageType: "webhook-delivery" },
        body: { DeliveryId: unknownId(), Attempt: 1 },
      };
    default: {
      const unreachable: never = topic;
      throw new Error(`unknown topic ${String(unreachable)}`);
    }
  }
}
