import { writeFile } from "node:fs/promises";
import path from "node:path";
import {
  insertInits,
  insertSteps,
  listInitsByBatch,
  listMembers,
  listPhases,
  listStepsByBatch,
  mergeWorkerData,
  recordAuditEvent,
  transitionInit,
  transitionPhase,
  transitionStep,
} from "@matoolkit/db";
import { expect } from "vitest";
import type { ApiHarness } from "../api-test-harness.ts";

/**
 * Test support (not exported): a batch whose members carry planted secrets, and whose stored
 * rows repeat them everywhere a worker, the orchestrator or an operator could put them, so a
 * walk of the read routes can look for the values in every answer.
 *
 * Three kinds of secret column: `InitialPassword` (its name looks secret), `Badge` (marked
 * `secret_columns` in the data source) and `Pin` (only referenced by a param marked
 * `secret_params`). Each member's values are its own.
 */
export const RUNBOOK_NAME = "secretive";
const CSV_FILE = "secretive.csv";

export const secretiveRunbookYaml = `name: ${RUNBOOK_NAME}
data_source:
  type: csv
  path: ${CSV_FILE}
  primary_key: UserPrincipalName
  batch_time: immediate
  secret_columns: [Badge]
init:
  - name: prepare
    worker_id: worker-01
    function: Test-Echo
phases:
  - name: cutover
    offset: T-1d
    steps:
      - name: set-password
        worker_id: worker-01
        function: Test-Echo
        params:
          UserPrincipalName: "{{UserPrincipalName}}"
          Password: "{{InitialPassword}}"
          Note: "badge {{Badge}}"
          Args: "-code {{Pin}}"
        secret_params: [Args]
        output_params:
          IssuedTo: issuedTo
`;

export interface PlantedMember {
  readonly upn: string;
  readonly password: string;
  readonly badge: string;
  readonly pin: string;
}

export const plantedMembers: readonly PlantedMember[] = [0, 1].map((i) => ({
  upn: `planted${i}@contoso.test`,
  password: `Pw${i}-Zq8vN-planted`,
  badge: `BDG${i}XK77LQ`,
  pin: `PIN${i}QQ42RT`,
}));

/** Every planted value: none may appear in any answer. */
export const plantedSecrets: readonly string[] = plantedMembers.flatMap((m) => [m.password, m.badge, m.pin]);

export function plantedCsv(): string {
  const rows = plantedMembers.map((m) => [m.upn, m.password, m.badge, m.pin].join(","));
  return `${["UserPrincipalName,InitialPassword,Badge,Pin", ...rows].join("\n")}\n`;
}

/** Publishes the runbook, writes its CSV source and creates a batch; returns the batch id. */
export async function plantSecretBatch(harness: ApiHarness): Promise<number> {
  await writeFile(path.join(harness.dataDir, CSV_FILE), plantedCsv());
  const published = await harness.request("POST", "/runbooks", {
    body: secretiveRunbookYaml,
    type: "application/yaml",
  });
  expect(published.status, published.text).toBe(201);
  const created = await harness.request("POST", `/batches?runbook=${RUNBOOK_NAME}`, {
    body: plantedCsv(),
    type: "text/csv",
  });
  expect(created.status, created.text).toBe(201);
  const batchId: number = created.body.id;
  await plantExecutions(harness, batchId);
  return batchId;
}

/** As the orchestrator and worker would have stored them: resolved params, echoing results. */
async function plantExecutions(harness: ApiHarness, batchId: number): Promise<void> {
  const { db } = harness;
  const [phase] = await listPhases(db, batchId);
  await transitionPhase(db, phase!.id, "dispatch");
  const members = await listMembers(db, batchId);
  await insertSteps(
    db,
    members.map((member, index) => {
      const planted = plantedMembers[index]!;
      return {
        batchId,
        phaseExecutionId: phase!.id,
        batchMemberId: member.id,
        stepName: "set-password",
        stepIndex: 0,
        workerId: "worker-01",
        functionName: "Test-Echo",
        paramsJson: {
          UserPrincipalName: planted.upn,
          Password: planted.password,
          Note: `badge ${planted.badge}`,
          Args: `-code ${planted.pin}`,
        },
      };
    }),
  );
  const [succeeded, failed] = await listStepsByBatch(db, batchId, { limit: 10, offset: 0 });
  const [first, second] = plantedMembers;
  await transitionStep(db, succeeded!.id, "dispatch");
  await transitionStep(db, succeeded!.id, "succeed", {
    set: {
      // Under keys that do not look secret, nested, in arrays, inside longer text.
      resultJson: {
        issuedTo: `${first!.upn} with ${first!.password}`,
        echo: { values: [first!.badge, `pin=${first!.pin}`] },
      },
    },
  });
  await mergeWorkerData(db, members[0]!.id, { IssuedTo: `${first!.upn} with ${first!.password}` });
  await transitionStep(db, failed!.id, "dispatch");
  await transitionStep(db, failed!.id, "fail", {
    reason: `worker.error ${second!.pin}`,
    set: {
      errorCode: "worker.error",
      errorMessage: `password ${second!.password} refused for badge ${second!.badge}`,
      resultJson: { detail: second!.pin },
    },
  });
  await recordAuditEvent(db, {
    batchId,
    entity: "member",
    entityId: members[1]!.id,
    fromStatus: "active",
    toStatus: "active",
    reason: `checked ${second!.badge}`,
    actor: "operator@example.test",
  });
  await insertInits(db, [
    {
      batchId,
      runbookVersion: 1,
      stepIndex: 0,
      stepName: "prepare",
      workerId: "worker-01",
      functionName: "Test-Echo",
    },
  ]);
  const [init] = await listInitsByBatch(db, batchId);
  await transitionInit(db, init!.id, "dispatch");
}
