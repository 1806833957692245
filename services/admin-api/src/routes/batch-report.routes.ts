import { z } from "zod";
import { notFound } from "../http/api-error.ts";
import { positiveId } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import { batchReport } from "../read-models/batch-report.ts";

export const batchReportCsvSchema = z.string().meta({
  description:
    "CSV (RFC 4180, CRLF): a header row, then one row per member in id order: `member id`, " +
    "`member key`, `member status`, then for each step of the batch's runbook version, phases and " +
    "steps in runbook order, `{phase}/{step} status`, `{phase}/{step} error` (reason code) and " +
    "`{phase}/{step} finished` (ISO 8601); empty where the step has no row yet; last, `external " +
    "ref`, the batch's externalRef on every row (empty when none). Cells starting " +
    "with =, +, -, @, tab or CR are prefixed with ' (spreadsheet formula injection).",
});

/** Issue 12: the batch's status as a spreadsheet, streamed so any batch size fits. */
export const batchReportOperations = [
  defineOperation({
    method: "get",
    path: "/api/batches/{id}/report.csv",
    operationId: "getBatchReport",
    tag: "batches",
    summary: "Download a batch's status report: one CSV row per member, columns per step",
    description:
      'Sent as an attachment (Content-Disposition: attachment; filename="batch-{id}-report.csv") ' +
      "and streamed (chunked): members are read 500 at a time as the client takes the rows. A step " +
      "retried or redriven reports its current run.",
    access: "read",
    params: z.object({ id: positiveId.meta({ description: "Batch id" }) }),
    errors: ["resource.not_found", "request.too_many_in_flight"],
    responses: {
      200: {
        description: "The report",
        schema: batchReportCsvSchema,
        contentType: "text/csv",
        streamed: true,
        headers: {
          "Content-Disposition": {
            description: 'attachment; filename="batch-{id}-report.csv"',
            schema: z.string(),
          },
        },
      },
    },
  }).handle(async ({ params, deps }) => {
    const stream = await batchReport(deps.db, params.id);
    if (stream === undefined) throw notFound(`batch ${params.id} does not exist`);
    return {
      status: 200,
      stream,
      headers: { "Content-Disposition": `attachment; filename="batch-${params.id}-report.csv"` },
    };
  }),
];
