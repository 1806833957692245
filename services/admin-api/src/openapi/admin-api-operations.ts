import packageJson from "../../package.json" with { type: "json" };
import { healthOperations } from "../http/health.operations.ts";
import { problemTypeOperation } from "../http/problem-type.operations.ts";
import { alertOperations } from "../routes/alerts.routes.ts";
import { auditOperations } from "../routes/audit.routes.ts";
import { authConfigOperations } from "../routes/auth-config.routes.ts";
import { automationOperations } from "../routes/automation.routes.ts";
import { batchMemberOperations } from "../routes/batch-members.routes.ts";
import { batchPauseOperations } from "../routes/batch-pause.routes.ts";
import { batchReportOperations } from "../routes/batch-report.routes.ts";
import { batchRedriveOperations } from "../routes/batch-redrive.routes.ts";
import { batchGridOperations } from "../routes/batch-grid.routes.ts";
import { batchOperations } from "../routes/batches.routes.ts";
import { memberSearchOperations } from "../routes/members.routes.ts";
import { phaseApprovalOperations } from "../routes/phase-approval.routes.ts";
import { retentionOperations } from "../routes/retention.routes.ts";
import { runbookPlanOperations } from "../routes/runbook-plan.routes.ts";
import { runbookTemplateOperations } from "../routes/runbook-template.routes.ts";
import { runbookVersionOperations } from "../routes/runbook-versions.routes.ts";
import { runbookOperations } from "../routes/runbooks.routes.ts";
import { tenantCheckOperations } from "../routes/tenant-check.routes.ts";
import { tenantChangeOperations } from "../routes/tenant-changes.routes.ts";
import { webhookOperations } from "../routes/webhooks.routes.ts";
import { workerPacingOperations } from "../routes/worker-pacing.routes.ts";
import { buildOpenApiDocument, type OpenApiDocument } from "./openapi-document.ts";
import { openApiOperation } from "./openapi.operation.ts";
import type { Operation } from "./operation.ts";

/**
 * Every operation of the admin API: app.ts mounts exactly these, and the OpenAPI document
 * describes exactly these. A route module joins by exporting its `defineOperation` list here.
 */
export function adminApiOperations(): readonly Operation[] {
  let document: OpenApiDocument | undefined;
  const operations: Operation[] = [
    ...healthOperations,
    problemTypeOperation,
    ...runbookOperations,
    ...runbookVersionOperations,
    ...runbookTemplateOperations,
    ...runbookPlanOperations,
    ...automationOperations,
    ...batchOperations,
    ...batchMemberOperations,
    ...memberSearchOperations,
    ...webhookOperations,
    ...batchPauseOperations,
    ...phaseApprovalOperations,
    ...batchReportOperations,
    ...batchRedriveOperations,
    ...batchGridOperations,
    ...auditOperations,
    ...alertOperations,
    ...tenantCheckOperations,
    ...tenantChangeOperations,
    ...workerPacingOperations,
    ...retentionOperations,
    ...authConfigOperations,
    openApiOperation(() => (document ??= buildOpenApiDocument(operations, packageJson.version))),
  ];
  return operations;
}
