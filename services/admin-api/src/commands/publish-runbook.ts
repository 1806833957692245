import type { DataSourceClient } from "@matoolkit/datasources";
import { publishRunbook, type Db, type Runbook } from "@matoolkit/db";
import {
  parseRunbook,
  positionRunbookProblems,
  type RunbookDefinition,
  type RunbookProblem,
} from "@matoolkit/domain";
import { declareWorkerPools, type MessageBus } from "@matoolkit/runtime";
import { z } from "zod";
import { describeFlaw, flawsByLine } from "../csv/text-problems.ts";
import { ApiError, badRequest } from "../http/api-error.ts";

// Strict: a misspelt option (`overdue_behavior`) would otherwise be dropped silently and the
// runbook published with the default behaviour the admin meant to change.
export const publishRunbookRequestSchema = z.strictObject({
  /** Optional: when given it must equal the YAML's `name` (000: "must match the name in the publish request"). */
  name: z.string().min(1).optional(),
  yaml: z.string().min(1, "yaml must hold the runbook YAML"),
  overdueBehavior: z.enum(["rerun", "ignore"]).default("rerun"),
  rerunInit: z.boolean().default(false),
});
export type PublishRunbookRequest = z.infer<typeof publishRunbookRequestSchema>;

/**
 * Validates the whole runbook (every problem at once, with line:column) before anything is
 * written, then stores it as the next version and deactivates the previous one. Besides the
 * parser's rules, the server's own: its data source must be one this server may read (a csv
 * file below MATOOLKIT_CSV_DIR, env vars a runbook may name), checked by `dataSources`.
 */
export async function publishRunbookCommand(
  db: Db,
  bus: MessageBus,
  request: PublishRunbookRequest,
  dataSources: Pick<DataSourceClient, "accessProblems">,
  /** The operator publishing: the audit event's actor (entity runbook, same transaction). */
  actor: string,
): Promise<Runbook> {
  const flaws = flawsByLine(request.yaml);
  if (flaws.length > 0) {
    throw runbookInvalid(
      flaws.map(({ line, column, flaw }) => ({ path: "", line, column, message: describeFlaw(flaw) })),
    );
  }
  const parsed = parseRunbook(request.yaml);
  if (!parsed.ok) throw runbookInvalid(parsed.problems);
  const refused = await dataSources.accessProblems(parsed.runbook.dataSource);
  if (refused.length > 0) {
    throw runbookInvalid(
      positionRunbookProblems(
        request.yaml,
        refused.map(({ field, message }) => ({ path: ["data_source", field], message })),
      ),
    );
  }
  if (request.name !== undefined && request.name !== parsed.runbook.name) {
    throw badRequest(`name '${request.name}' does not match the runbook's name '${parsed.runbook.name}'`);
  }
  // Before the version is stored: once it is, jobs may be dispatched to its worker pools, and a
  // pool's subscription must exist to hold them until the pool's first worker starts.
  await declareWorkerPools(bus, workerIdsOf(parsed.runbook));
  return publishRunbook(db, {
    name: parsed.runbook.name,
    yamlContent: request.yaml,
    overdueBehavior: request.overdueBehavior,
    rerunInit: request.rerunInit,
    actor,
  });
}

function runbookInvalid(problems: readonly RunbookProblem[]): ApiError {
  const summary = problems.map((p) => `${p.line}:${p.column} ${p.path}: ${p.message}`).join("; ");
  return new ApiError(400, "runbook.invalid", `Runbook has ${problems.length} problem(s): ${summary}`, {
    problems: [...problems],
  });
}

function workerIdsOf(runbook: RunbookDefinition): string[] {
  const steps = [
    ...runbook.init,
    ...runbook.phases.flatMap((phase) => phase.steps),
    ...runbook.onMemberRemoved,
    ...Object.values(runbook.rollbacks).flat(),
  ];
  return steps.map((step) => step.workerId);
}
