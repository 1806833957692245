import packageJson from "../../package.json" with { type: "json" };
import { healthOperations } from "../http/health.operations.ts";
import { problemTypeOperation } from "../http/problem-type.operations.ts";
import { automationOperations } from "../routes/automation.routes.ts";
import { batchMemberOperations } from "../routes/batch-members.routes.ts";
import { batchOperations } from "../routes/batches.routes.ts";
import { runbookTemplateOperations } from "../routes/runbook-template.routes.ts";
import { runbookVersionOperations } from "../routes/runbook-versions.routes.ts";
import { runbookOperations } from "../routes/runbooks.routes.ts";
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
    ...automationOperations,
    ...batchOperations,
    ...batchMemberOperations,
    openApiOperation(() => (document ??= buildOpenApiDocument(operations, packageJson.version))),
  ];
  return operations;
}
