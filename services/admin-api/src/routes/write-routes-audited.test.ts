import { describe, expect, it } from "vitest";
import { adminApiOperations } from "../openapi/admin-api-operations.ts";

/**
 * Issue 25 finding 7, for the whole class: every operation that is not a GET either writes an
 * audit row (events with the caller as actor, in the write's own transaction) or writes nothing,
 * and says which test proves it. A new write route fails here until it is classified, so no write
 * can ship without its audit row being thought of.
 */
const writeRoutes: Readonly<Record<string, string>> = {
  publishRunbook: "audited: runbook null → active (audit.routes.test.ts)",
  deactivateRunbookVersion: "audited: runbook active → inactive (audit.routes.test.ts)",
  setAutomation: "audited when it changes: automation enabled ⇄ disabled (audit.routes.test.ts)",
  createBatch: "audited: batch null → detected → active (audit.routes.test.ts)",
  advanceBatch: "audited: phase pending → dispatched (audit.routes.test.ts)",
  cancelBatch: "audited: batch → cancelled (audit.routes.test.ts)",
  addBatchMembers: "audited: member null → active (audit.routes.test.ts)",
  removeBatchMember: "audited: member active → removed (audit.routes.test.ts)",
  pauseBatch: "audited: batch → paused with actor (batch-pause.routes.test.ts)",
  resumeBatch: "audited: batch paused → active with actor (batch-pause.routes.test.ts)",
  redriveBatch: "audited: steps and members redriven with actor (batch-redrive.routes.test.ts)",
  approvePhase: "audited: phase awaiting_approval → dispatched with actor (phase-approval.routes.test.ts)",
  rejectPhase: "audited: phase awaiting_approval → failed with actor (phase-approval.routes.test.ts)",
  createWebhook: "audited: webhook null → active (webhooks.security.test.ts)",
  deleteWebhook: "audited: webhook active → deleted, a tombstone (webhooks.security.test.ts)",
  pingWebhook: "audited: webhook annotation, ping queued (webhooks.security.test.ts)",
  purgeEndedBatches:
    "audited: batch annotation per purged batch, dry run writes nothing (retention.routes.test.ts)",
  eraseMember: "audited: member annotation per erased row (retention.routes.test.ts)",
  planRunbook: "writes nothing: a dry run of a runbook over a CSV",
  previewRunbookQuery: "writes nothing: runs the source query and shows what a tick would do",
  checkTenant: "writes nothing: reads the tenant (tenant-check.routes.test.ts)",
};

describe("write routes", () => {
  it("are each audited or write nothing", () => {
    const writes = adminApiOperations()
      .filter((operation) => operation.method !== "get")
      .map((operation) => operation.operationId)
      .sort();
    expect(writes).toEqual(Object.keys(writeRoutes).sort());
  });
});
