import { listDeliveries, listWebhooks, webhookExists } from "@matoolkit/db";
import { notificationTypes } from "@matoolkit/domain";
import { OutboundRequestError, parseOutboundUrl } from "@matoolkit/platform";
import { z } from "zod";
import { createWebhookCommand, deleteWebhookCommand, pingWebhookCommand } from "../commands/webhooks.ts";
import { notFound } from "../http/api-error.ts";
import { MAX_SQL_INTEGER, isStorableText, positiveId, wholeNumber } from "../http/params.ts";
import { defineOperation } from "../openapi/operation.ts";
import {
  createdWebhookSchema,
  deletedWebhookSchema,
  deliveryPageSchema,
  pingResultSchema,
  webhookSchema,
} from "../read-models/webhook-schemas.ts";

/**
 * The receiver's address, parsed as every send parses it (libs/platform outbound): http(s) only,
 * no user:password (it would be shown by GET and could leak through proxies; a receiver that
 * needs a token verifies the signature instead). Its host's addresses are checked by the command.
 */
const webhookUrl = z
  .string()
  .max(2000, "must be at most 2000 characters")
  .superRefine((text, ctx) => {
    const problem = urlProblem(text);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
  });

// Strict: a misspelt `event` or `runbook` must be an error, not a webhook that never fires.
export const createWebhookRequestSchema = z.strictObject({
  url: webhookUrl,
  runbookName: z
    .string()
    .min(1, "must be a non-empty string")
    .refine(isStorableText, "must not contain NUL or invalid Unicode")
    .optional()
    .meta({ description: "Only this runbook's batches; every runbook when absent" }),
  events: z
    .array(z.enum(notificationTypes, `must each be one of ${notificationTypes.join(", ")}`))
    .min(1, `must list at least one of ${notificationTypes.join(", ")}`),
});

const webhookId = z.object({ id: positiveId.meta({ description: "Webhook id" }) });

/**
 * Webhook notifications (issue 12): Admin only, reads included (a receiver URL may carry a
 * token in its path or query).
 */
export const webhookOperations = [
  defineOperation({
    method: "post",
    path: "/api/webhooks",
    operationId: "createWebhook",
    tag: "webhooks",
    summary: "Register a webhook: where to POST which notifications",
    description:
      "The response holds the signing secret; it is shown this once and never again (it is stored " +
      "encrypted). The URL's host is resolved now and at each delivery: loopback, private, link-local " +
      "(cloud metadata), unique-local, CGNAT, multicast and other non-public addresses are refused " +
      "(400 naming the address and why) unless the server's MATOOLKIT_WEBHOOK_ALLOWED_HOSTS allows " +
      `them. Redirects are never followed. Events: ${notificationTypes.join(", ")}.`,
    access: "Admin",
    // Its answer holds the signing secret, shown once: never stored for a replay.
    acceptsIdempotencyKey: false,
    body: {
      content: { "application/json": createWebhookRequestSchema },
      limit: "16kb",
      invalid: 'Send JSON { "url": "https://…", "events": ["batch.completed", …], "runbookName"?: "…" }',
    },
    errors: ["resource.not_found"],
    responses: {
      201: { description: "The webhook, with its secret (this once)", schema: createdWebhookSchema },
    },
  }).handle(async ({ body, principal, deps }) => ({
    status: 201,
    body: await createWebhookCommand(deps, { ...body, createdBy: principal.identity }),
  })),

  defineOperation({
    method: "get",
    path: "/api/webhooks",
    operationId: "listWebhooks",
    tag: "webhooks",
    summary: "List webhooks (never their secrets)",
    access: "Admin",
    responses: { 200: { description: "Every webhook, in id order", schema: z.array(webhookSchema) } },
  }).handle(async ({ deps }) => ({ status: 200, body: await listWebhooks(deps.db) })),

  defineOperation({
    method: "delete",
    path: "/api/webhooks/{id}",
    operationId: "deleteWebhook",
    tag: "webhooks",
    summary:
      "Delete a webhook: no more deliveries (pending retries are given up); its delivery history stays",
    access: "Admin",
    params: webhookId,
    errors: ["resource.not_found"],
    responses: { 200: { description: "Deleted", schema: deletedWebhookSchema } },
  }).handle(async ({ params, principal, deps }) => {
    await deleteWebhookCommand(deps.db, { id: params.id, actor: principal.identity });
    return { status: 200, body: { id: params.id, deleted: true as const } };
  }),

  defineOperation({
    method: "get",
    path: "/api/webhooks/{id}/deliveries",
    operationId: "listWebhookDeliveries",
    tag: "webhooks",
    summary:
      "Page through a webhook's deliveries (a deleted one's too), oldest first, each with its attempts",
    access: "Admin",
    params: webhookId,
    query: z.object({
      afterId: wholeNumber(0, MAX_SQL_INTEGER)
        .optional()
        .meta({ description: "The last delivery id already seen" }),
      limit: wholeNumber(1, 500).default(100).meta({ description: "How many to return" }),
    }),
    errors: ["resource.not_found"],
    responses: { 200: { description: "A page of deliveries", schema: deliveryPageSchema } },
  }).handle(async ({ params, query, deps }) => {
    const rows = await listDeliveries(deps.db, params.id, { afterId: query.afterId, limit: query.limit + 1 });
    if (rows.length === 0 && !(await webhookExists(deps.db, params.id))) {
      throw notFound(`webhook ${params.id} does not exist`);
    }
    const items = rows.slice(0, query.limit).map(({ payload: _payload, ...row }) => row);
    const nextAfterId = rows.length > query.limit ? (items.at(-1)?.id ?? null) : null;
    return { status: 200, body: { items, nextAfterId } };
  }),

  defineOperation({
    method: "post",
    path: "/api/webhooks/{id}/test",
    operationId: "pingWebhook",
    tag: "webhooks",
    summary: "Send the webhook a signed `ping` (queued; see its deliveries for the answer)",
    access: "Admin",
    params: webhookId,
    errors: ["resource.not_found"],
    responses: { 202: { description: "Queued", schema: pingResultSchema } },
  }).handle(async ({ params, principal, deps }) => ({
    status: 202,
    body: {
      webhookId: params.id,
      ...(await pingWebhookCommand(deps.db, { id: params.id, actor: principal.identity })),
    },
  })),
];

function urlProblem(text: string): string | undefined {
  try {
    parseOutboundUrl(text);
    return undefined;
  } catch (error) {
    if (error instanceof OutboundRequestError) return error.message;
    throw error;
  }
}
