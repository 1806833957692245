import { getActiveRunbook, getRunbookVersion } from "@matoolkit/db";
import {
  parseRunbookOrThrow,
  tenantCheckReportSchema,
  tenantCheckSteps,
  type TenantCheckStep,
} from "@matoolkit/domain";
import { z } from "zod";
import { ApiError, notFound } from "../http/api-error.ts";
import { nonEmptyText, positiveId } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";

/** How long the check may take: a handful of reads, each with the adapters' own timeout. */
const CHECK_TIMEOUT_MS = 60_000;

/**
 * Issue 27, point 4: the pre-flight check of the worker's target tenant. The check itself runs
 * in the worker's tenant layer (services/worker/src/tenant/tenant-check.ts), where the credential
 * is; this API only reads the runbook and hands its steps over (deps.tenantChecker).
 */
export const tenantCheckOperations = [
  // POST: it calls the tenant (tokens, Graph and Exchange reads); it changes nothing. Operator: a
  // batch-running concern, and it spends the tenant's request budget.
  defineOperation({
    method: "post",
    path: "/api/tenant/check",
    operationId: "checkTenant",
    tag: "tenant",
    summary:
      "Pre-flight check of the worker's target tenant: tokens, permissions, Exchange role, B2B policy, domains",
    description:
      "One line per check, `passed`, `failed`, `warning` or `skipped`, with what is missing named " +
      "(`missing`: permissions, a role, domains). With `runbook`, the permissions of the standard " +
      "functions it calls and the domains its params write into the target tenant (where they are " +
      "literal); without, the permissions of every standard function. Reads only; never a token or " +
      "a secret in the answer.",
    access: "Operator",
    acceptsIdempotencyKey: false,
    query: z.strictObject({
      runbook: nonEmptyText
        .optional()
        .meta({ description: "Runbook name (its active version unless `version`)" }),
      version: positiveId.optional().meta({ description: "Runbook version" }),
    }),
    errors: ["validation.invalid_input", "resource.not_found", "tenant.check_unavailable"],
    responses: { 200: { description: "The check's lines", schema: tenantCheckReportSchema } },
  }).handle(async ({ query, deps }) => {
    if (query.version !== undefined && query.runbook === undefined) {
      throw new ApiError(400, "validation.invalid_input", "version needs runbook");
    }
    const checker = deps.tenantChecker;
    if (checker === undefined) {
      throw new ApiError(
        503,
        "tenant.check_unavailable",
        "This API process runs no worker, and the check runs where the tenant's credential is: run `npm run tenant:check` in the worker's environment",
      );
    }
    let runbook: { name: string; version: number; steps: TenantCheckStep[] } | undefined;
    if (query.runbook !== undefined) {
      const row =
        query.version === undefined
          ? await getActiveRunbook(deps.db, query.runbook)
          : await getRunbookVersion(deps.db, query.runbook, query.version);
      if (row === undefined) {
        throw notFound(
          query.version === undefined
            ? `no active runbook named '${query.runbook}'`
            : `runbook '${query.runbook}' has no version ${query.version}`,
        );
      }
      runbook = {
        name: row.name,
        version: row.version,
        steps: tenantCheckSteps(parseRunbookOrThrow(row.yamlContent)),
      };
    }
    const report = await checker(
      runbook === undefined ? {} : { runbook },
      AbortSignal.timeout(CHECK_TIMEOUT_MS),
    );
    return { status: 200, body: report };
  }),
];
