import {
  getActiveRunbook,
  getRunbookVersion,
  listActiveRunbooks,
  listRunbookVersions,
  type Runbook,
} from "@matoolkit/db";
import { z } from "zod";
import {
  publishRunbookCommand,
  publishRunbookRequestSchema,
  type PublishRunbookRequest,
} from "../commands/publish-runbook.ts";
import { badRequest, notFound } from "../http/api-error.ts";
import { nonEmptyText, oneOf, positiveId, textParam } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import { runbookSchema, runbookWithYamlSchema } from "../read-models/runbook-schemas.ts";

const yamlTypes = ["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "text/plain"];
const yamlBody = z.string().min(1, "the runbook YAML is empty").meta({ description: "The runbook YAML" });
const nameParam = z.object({ name: textParam.meta({ description: "Runbook name" }) });
const sendRunbookHint =
  "Send the runbook YAML as the body (Content-Type: application/yaml) or JSON { yaml, overdueBehavior?, rerunInit? }";

/** 000 "Admin API Internals": publish and read runbook versions. */
export const runbookOperations = [
  // Body: JSON `{ yaml, name?, overdueBehavior?, rerunInit? }`, or the raw YAML with the options
  // in the query string (`curl --data-binary @runbook.yaml -H 'Content-Type: application/yaml'`).
  defineOperation({
    method: "post",
    path: "/api/runbooks",
    operationId: "publishRunbook",
    tag: "runbooks",
    summary: "Publish a new runbook version",
    description:
      "Validates the whole runbook (every problem at once, with line and column) before storing " +
      "it as the next version; the previous version is deactivated. With a YAML body the options " +
      "come from the query string; with JSON they are fields of the body (the query's are not used).",
    access: "Admin",
    query: z.object({
      name: nonEmptyText.optional().meta({ description: "Must equal the YAML's name when given" }),
      overdueBehavior: oneOf(["rerun", "ignore"]).optional(),
      rerunInit: z
        .stringbool({ truthy: ["true"], falsy: ["false"], error: "must be true or false" })
        .optional(),
    }),
    body: {
      content: {
        "application/json": publishRunbookRequestSchema,
        ...Object.fromEntries(yamlTypes.map((type) => [type, yamlBody])),
      },
      limit: "1mb",
      invalid: sendRunbookHint,
    },
    errors: ["runbook.invalid"],
    responses: { 201: { description: "The new version, now the active one", schema: runbookSchema } },
  }).handle(async ({ query, body, principal, deps }) => {
    const request = typeof body === "string" ? withQueryOptions(body, query) : body;
    const runbook = await publishRunbookCommand(
      deps.db,
      deps.bus,
      request,
      deps.dataSources,
      principal.identity,
    );
    return { status: 201, body: presentRunbook(runbook) };
  }),

  defineOperation({
    method: "get",
    path: "/api/runbooks",
    operationId: "listRunbooks",
    tag: "runbooks",
    summary: "List the active version of every runbook",
    access: "read",
    responses: { 200: { description: "Active runbooks, without YAML", schema: z.array(runbookSchema) } },
  }).handle(async ({ deps }) => ({
    status: 200,
    body: (await listActiveRunbooks(deps.db)).map(presentRunbook),
  })),

  defineOperation({
    method: "get",
    path: "/api/runbooks/{name}",
    operationId: "getRunbook",
    tag: "runbooks",
    summary: "Get the active version of a runbook, with its YAML",
    access: "read",
    params: nameParam,
    errors: ["resource.not_found"],
    responses: { 200: { description: "The active version", schema: runbookWithYamlSchema } },
  }).handle(async ({ params, deps }) => {
    const runbook = await getActiveRunbook(deps.db, params.name);
    if (runbook === undefined) throw notFound(`no active runbook named '${params.name}'`);
    return { status: 200, body: presentRunbookWithYaml(runbook) };
  }),

  defineOperation({
    method: "get",
    path: "/api/runbooks/{name}/versions",
    operationId: "listRunbookVersions",
    tag: "runbooks",
    summary: "List every version of a runbook, newest first",
    access: "read",
    params: nameParam,
    errors: ["resource.not_found"],
    responses: { 200: { description: "All versions, without YAML", schema: z.array(runbookSchema) } },
  }).handle(async ({ params, deps }) => {
    const versions = await listRunbookVersions(deps.db, params.name);
    if (versions.length === 0) throw notFound(`no runbook named '${params.name}'`);
    return { status: 200, body: versions.map(presentRunbook) };
  }),

  defineOperation({
    method: "get",
    path: "/api/runbooks/{name}/versions/{version}",
    operationId: "getRunbookVersion",
    tag: "runbooks",
    summary: "Get one version of a runbook, with its YAML",
    access: "read",
    params: nameParam.extend({ version: positiveId }),
    errors: ["resource.not_found"],
    responses: { 200: { description: "The version", schema: runbookWithYamlSchema } },
  }).handle(async ({ params, deps }) => {
    const runbook = await getRunbookVersion(deps.db, params.name, params.version);
    if (runbook === undefined) throw notFound(`runbook '${params.name}' has no version ${params.version}`);
    return { status: 200, body: presentRunbookWithYaml(runbook) };
  }),
];

/** A YAML body takes its options from the query string (each already validated on its own). */
function withQueryOptions(yaml: string, query: Record<string, unknown>): PublishRunbookRequest {
  const request = publishRunbookRequestSchema.safeParse({ ...query, yaml });
  if (request.success) return request.data;
  throw badRequest(sendRunbookHint, {
    problems: request.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
  });
}

function presentRunbook(runbook: Runbook): z.output<typeof runbookSchema> {
  return {
    id: runbook.id,
    name: runbook.name,
    version: runbook.version,
    isActive: runbook.isActive,
    overdueBehavior: runbook.overdueBehavior,
    rerunInit: runbook.rerunInit,
    createdAt: runbook.createdAt,
    lastError: runbook.lastError,
    lastErrorAt: runbook.lastErrorAt,
  };
}

function presentRunbookWithYaml(runbook: Runbook): z.output<typeof runbookWithYamlSchema> {
  return { ...presentRunbook(runbook), yamlContent: runbook.yamlContent };
}
