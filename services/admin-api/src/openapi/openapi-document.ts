import type { z } from "zod";
import { describeRoles, readRoles, rolesGranting } from "../auth/index.ts";
import { problemDetailsSchema } from "../http/problem-details.ts";
import { SchemaComponents, type JsonSchema } from "./json-schema.ts";
import type { Access, Operation } from "./operation.ts";
import { problemResponses } from "./problem-responses.ts";
import {
  acceptsIdempotencyKey,
  IDEMPOTENCY_KEY_HEADER,
  MAX_IDEMPOTENCY_KEY_LENGTH,
} from "../http/idempotency.ts";

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

/**
 * The OpenAPI 3.1 description of the admin API, generated from the same operation registry that
 * app.ts mounts (see operation.ts), so every route is described and every description routed.
 */
export function buildOpenApiDocument(operations: readonly Operation[], version: string): OpenApiDocument {
  const components = new SchemaComponents();
  const problemRef = components.convert(problemDetailsSchema, "input");
  const paths: OpenApiDocument["paths"] = {};
  const operationIds = new Set<string>();
  for (const operation of operations) {
    if (operationIds.has(operation.operationId))
      throw new Error(`operationId ${operation.operationId} is used twice`);
    operationIds.add(operation.operationId);
    const item = (paths[operation.path] ??= {});
    if (item[operation.method] !== undefined)
      throw new Error(`${operation.method} ${operation.path} is declared twice`);
    item[operation.method] = describeOperation(operation, components, problemRef);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "matoolkit admin API",
      version,
      description:
        "Runbooks, automation and batches of the migration toolkit. Errors are RFC 9457 problem " +
        "details (application/problem+json) with a stable `code`; `GET /problems/{code}` explains each.",
    },
    tags: [...new Set(operations.map((operation) => operation.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description:
            "An Entra ID access token for the API's audience (or a local token from `npm run token`). " +
            "Each operation's `x-required-roles` lists the app roles it accepts; any one suffices. " +
            "Roles include the ones below them: Reader reads; Operator also runs batches (advance, " +
            "cancel, pause, resume, redrive, members); Admin also publishes runbooks, switches " +
            "automation and creates batches.",
        },
      },
    },
  };
}

function describeOperation(operation: Operation, components: SchemaComponents, problemRef: JsonSchema) {
  const isPublic = operation.access === "public";
  return {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    description: [operation.description, accessSentence(operation)].filter(Boolean).join("\n\n"),
    security: isPublic ? [] : [{ bearerAuth: [] }],
    "x-required-roles": requiredRoles(operation.access),
    parameters: [
      ...parameters(operation.params, "path", components),
      ...parameters(operation.query, "query", components),
      ...(acceptsIdempotencyKey(operation) ? [idempotencyKeyParameter] : []),
    ],
    ...(operation.body === undefined
      ? {}
      : {
          requestBody: {
            required: true,
            ...(operation.body.description === undefined ? {} : { description: operation.body.description }),
            content: Object.fromEntries(
              Object.entries(operation.body.content).map(([type, schema]) => [
                type,
                { schema: components.convert(schema, "input") },
              ]),
            ),
          },
        }),
    responses: { ...successResponses(operation, components), ...problemResponses(operation, problemRef) },
  };
}

/** http/idempotency.ts: every POST that writes takes it. */
const idempotencyKeyParameter = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: "header",
  required: false,
  description:
    "Makes a retry safe: the same key again (same caller, within 24 hours) answers the first " +
    "request's response again, with `Idempotent-Replayed: true`, instead of acting twice. 409 " +
    "`idempotency.in_progress` while the first is still running; 422 `idempotency.key_reused` for " +
    "the same key with another request. A failed request frees its key. 1-200 visible ASCII " +
    'characters, e.g. a UUID, optionally quoted (`"…"`).',
  schema: { type: "string", minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
};

function accessSentence(operation: Operation): string {
  switch (operation.access) {
    case "public":
      return "No token needed.";
    case "read":
      return `Needs a bearer token with read access (any of the app roles ${readRoles.join(", ")}).`;
    default:
      return `Needs a bearer token with the ${describeRoles(rolesGranting(operation.access))} app role.`;
  }
}

/** Any one of these app roles lets a caller in; none for public operations. */
function requiredRoles(access: Access): readonly string[] {
  if (access === "public") return [];
  if (access === "read") return readRoles;
  // A role includes the ones below it: Operator operations also admit Admin.
  return rolesGranting(access);
}

function parameters(
  schema: z.ZodObject | undefined,
  location: "path" | "query",
  components: SchemaComponents,
) {
  return Object.entries(schema?.shape ?? {}).map(([name, field]) => {
    const { description, ...fieldSchema } = components.convert(field as z.ZodType, "output");
    return {
      name,
      in: location,
      required: location === "path" || !(field as z.ZodType).safeParse(undefined).success,
      ...(typeof description === "string" ? { description } : {}),
      schema: fieldSchema,
    };
  });
}

function successResponses(operation: Operation, components: SchemaComponents) {
  return Object.fromEntries(
    Object.entries(operation.responses).map(([status, spec]) => {
      const contentType = spec!.contentType ?? "application/json";
      const schema = components.convert(spec!.schema, "input");
      const headers = Object.entries(spec!.headers ?? {}).map(([name, header]) => [
        name,
        { description: header.description, schema: components.convert(header.schema, "input") },
      ]);
      return [
        status,
        {
          description: spec!.description,
          ...(headers.length === 0 ? {} : { headers: Object.fromEntries(headers) }),
          content: { [contentType]: { schema } },
        },
      ];
    }),
  );
}
