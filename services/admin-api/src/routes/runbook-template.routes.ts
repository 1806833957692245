import { getActiveRunbook, getRunbookVersion, type Db } from "@matoolkit/db";
import { parseRunbookOrThrow } from "@matoolkit/domain";
import { z } from "zod";
import { csvHeaderLine, templateColumns } from "../commands/runbook-template.ts";
import { notFound } from "../http/api-error.ts";
import { nonEmptyText, positiveId } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";

/**
 * `version` picks a version other than the active one: a batch runs the version it was created
 * with, and members added to it later must fit that version's columns. Strict, so a misspelt
 * `?verison=1` is refused rather than silently giving the active version's columns.
 */
export const runbookTemplateQuerySchema = z.strictObject({
  version: positiveId.optional().meta({ description: "Version (default: the active version)" }),
});

/** 200 `text/csv`, as an attachment `<name>-template.csv`: the header row, CRLF-terminated. */
export const runbookTemplateResponseSchema = z.string().meta({
  description: "CSV header row: primary key, batch time column, multi-valued columns, referenced columns",
});

/** 000 "Download CSV template": readable by every reader role (Reader, Operator, Admin). */
export const runbookTemplateOperations = [
  defineOperation({
    method: "get",
    path: "/api/runbooks/{name}/template",
    operationId: "getRunbookTemplate",
    tag: "runbooks",
    summary: "Download the header row of a member CSV for a runbook version",
    description:
      'Sent as an attachment (Content-Disposition: attachment; filename="<name>-template.csv"). ' +
      "Filled in with one member per line, it is the body of POST /api/batches and of " +
      "POST /api/batches/{id}/members.",
    access: "read",
    params: z.object({ name: nonEmptyText.meta({ description: "Runbook name" }) }),
    query: runbookTemplateQuerySchema,
    errors: ["resource.not_found"],
    responses: {
      200: {
        description: "The CSV header row",
        schema: runbookTemplateResponseSchema,
        contentType: "text/csv",
      },
    },
  }).handle(async ({ params, query, deps }) => {
    const file = await runbookTemplateFile(deps.db, params.name, query.version);
    return {
      status: 200,
      body: file.text,
      headers: { "Content-Disposition": `attachment; filename="${file.fileName}"` },
    };
  }),
];

/** The template of a runbook version (the active one by default), as a file to download. */
export async function runbookTemplateFile(
  db: Db,
  name: string,
  version: number | undefined,
): Promise<{ fileName: string; text: string }> {
  const row =
    version === undefined ? await getActiveRunbook(db, name) : await getRunbookVersion(db, name, version);
  if (row === undefined) {
    throw notFound(
      version === undefined
        ? `no active runbook named '${name}'`
        : `runbook '${name}' has no version ${version}`,
    );
  }
  const columns = templateColumns(parseRunbookOrThrow(row.yamlContent));
  // The name goes into a header: only characters that are safe inside the quoted filename.
  return { fileName: `${row.name.replace(/[^\w.-]/g, "_")}-template.csv`, text: csvHeaderLine(columns) };
}
