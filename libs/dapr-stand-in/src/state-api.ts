import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { formatRfc3339 } from "./cloud-event.ts";
import { headerValue, metadataFromQuery, readBody, sendDaprError, sendEmpty, sendJson } from "./http-util.ts";
import type { SidecarContext } from "./sidecar-context.ts";
import { StateError, type StateOperation } from "./state-store.ts";

/**
 * The state management API (state API reference): save (`POST /v1.0/state/<store>`), get
 * (`GET .../<key>`: value + ETag header, 204 when missing), bulk get (`POST .../bulk`), delete
 * (`DELETE .../<key>` with `If-Match`) and transactions (`POST .../transaction`). Keys are stored as `<appId>||<key>`,
 * Dapr's default key prefix strategy, so apps with different ids never see each other's keys.
 */

const stateOptionsSchema = z
  .looseObject({
    concurrency: z.enum(["first-write", "last-write"]).optional(),
    consistency: z.enum(["eventual", "strong"]).optional(),
  })
  .optional();

const stateItemSchema = z.looseObject({
  key: z.string(),
  value: z.unknown().optional(),
  etag: z.string().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  options: stateOptionsSchema,
});

const saveBodySchema = z.array(stateItemSchema);

const bulkGetBodySchema = z.looseObject({
  keys: z.array(z.string()),
  parallelism: z.number().int().optional(),
});

const transactionBodySchema = z.looseObject({
  operations: z.array(z.looseObject({ operation: z.string(), request: stateItemSchema })),
  metadata: z.record(z.string(), z.string()).optional(),
});

type StateItem = z.infer<typeof stateItemSchema>;

export type StateRoute =
  | { readonly kind: "save" }
  | { readonly kind: "get"; readonly key: string }
  | { readonly kind: "delete"; readonly key: string }
  | { readonly kind: "bulk-get" }
  | { readonly kind: "transaction" };

export async function handleState(
  context: SidecarContext,
  request: IncomingMessage,
  response: ServerResponse,
  storeName: string,
  route: StateRoute,
  query: URLSearchParams,
): Promise<void> {
  if (context.stateStores.length === 0) {
    sendDaprError(response, 500, "ERR_STATE_STORES_NOT_CONFIGURED", "state store is not configured");
    return;
  }
  if (!context.stateStores.includes(storeName)) {
    sendDaprError(
      response,
      400,
      "ERR_STATE_STORE_NOT_FOUND",
      `state store ${storeName} is not found`,
      "DAPR_STATE_NOT_FOUND",
    );
    return;
  }
  const queryMetadata = metadataFromQuery(query);
  switch (route.kind) {
    case "save":
      return save(context, request, response, storeName, queryMetadata);
    case "get":
      return get(context, response, storeName, route.key);
    case "delete":
      return remove(context, request, response, storeName, route.key);
    case "bulk-get":
      return bulkGet(context, request, response, storeName);
    case "transaction":
      return transaction(context, request, response, storeName, queryMetadata);
    default:
      return assertNever(route);
  }
}

async function save(
  context: SidecarContext,
  request: IncomingMessage,
  response: ServerResponse,
  storeName: string,
  queryMetadata: Record<string, string>,
): Promise<void> {
  const body = await parseJsonBody(request, response, saveBodySchema);
  if (body === undefined) return;
  const invalid = body.map((item) => invalidKeyReason(item.key)).find((reason) => reason !== undefined);
  if (invalid !== undefined) {
    sendDaprError(response, 400, "ERR_MALFORMED_REQUEST", invalid, "DAPR_STATE_ILLEGAL_KEY");
    return;
  }

  // A non-transactional bulk save applies every item on its own; the first failure is reported.
  let firstError: StateError | undefined;
  for (const item of body) {
    const error = saveWithRetries(context, storeName, item, queryMetadata);
    firstError ??= error;
  }
  if (firstError !== undefined) {
    const status = statusFor(context, firstError);
    sendDaprError(
      response,
      status,
      "ERR_STATE_SAVE",
      `failed saving state in state store ${storeName}: ${firstError.message}`,
    );
    return;
  }
  sendEmpty(response);
}

/**
 * One item as daprd saves it under the state store's outbound resiliency policy: a plain store
 * error (a first-write conflict the store does not report as an ETag mismatch, a timeout) is run
 * again up to `stateSaveRetries` times; an ETag mismatch is permanent.
 */
function saveWithRetries(
  context: SidecarContext,
  storeName: string,
  item: StateItem,
  queryMetadata: Record<string, string>,
): StateError | undefined {
  const internals = context.broker.internals;
  let last: StateError | undefined;
  for (let run = 0; run <= context.broker.options.stateSaveRetries; run += 1) {
    internals.countStateSave(item.key);
    try {
      internals.state.apply(storeName, [toSetOperation(context, item, queryMetadata, false)]);
      if (!internals.takeStateSaveTimeout(item.key)) return undefined;
      last = new StateError("timeout", item.key, "context deadline exceeded");
    } catch (error) {
      if (!(error instanceof StateError)) throw error;
      last = error;
    }
    if (statusFor(context, last) === 409) return last;
  }
  return last;
}

function get(context: SidecarContext, response: ServerResponse, storeName: string, key: string): void {
  const invalid = invalidKeyReason(key);
  if (invalid !== undefined) {
    sendDaprError(response, 400, "ERR_MALFORMED_REQUEST", invalid, "DAPR_STATE_ILLEGAL_KEY");
    return;
  }
  const item = context.broker.internals.state.get(storeName, storageKey(context, key));
  if (item === undefined) {
    sendEmpty(response, 204);
    return;
  }
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(item.json)),
    etag: item.etag,
  };
  if (item.expiresAt !== undefined) headers["metadata.ttlExpireTime"] = formatRfc3339(item.expiresAt);
  response.writeHead(200, headers);
  response.end(item.json);
}

/**
 * daprd's bulk get answers 200 with one item per requested key, in order: `{key, data, etag}`
 * (plus `metadata.ttlExpireTime` when the item has a TTL), or just `{key}` for a key that is
 * absent (or expired, as the single get would hide it). `parallelism` changes nothing in memory.
 */
async function bulkGet(
  context: SidecarContext,
  request: IncomingMessage,
  response: ServerResponse,
  storeName: string,
): Promise<void> {
  const body = await parseJsonBody(request, response, bulkGetBodySchema);
  if (body === undefined) return;
  const invalid = body.keys.map((key) => invalidKeyReason(key)).find((reason) => reason !== undefined);
  if (invalid !== undefined) {
    sendDaprError(response, 400, "ERR_MALFORMED_REQUEST", invalid, "DAPR_STATE_ILLEGAL_KEY");
    return;
  }
  const items = body.keys.map((key) => {
    const item = context.broker.internals.state.get(storeName, storageKey(context, key));
    if (item === undefined) return { key };
    return {
      key,
      data: JSON.parse(item.json) as unknown,
      etag: item.etag,
      ...(item.expiresAt === undefined ? {} : { metadata: { ttlExpireTime: formatRfc3339(item.expiresAt) } }),
    };
  });
  sendJson(response, 200, items);
}

async function remove(
  context: SidecarContext,
  request: IncomingMessage,
  response: ServerResponse,
  storeName: string,
  key: string,
): Promise<void> {
  await readBody(request);
  const invalid = invalidKeyReason(key);
  if (invalid !== undefined) {
    sendDaprError(response, 400, "ERR_MALFORMED_REQUEST", invalid, "DAPR_STATE_ILLEGAL_KEY");
    return;
  }
  // The `concurrency`/`consistency` query hints change nothing in a single in-memory store.
  const etag = headerValue(request, "if-match");
  try {
    context.broker.internals.state.apply(storeName, [
      { kind: "delete", key: storageKey(context, key), etag },
    ]);
  } catch (error) {
    if (!(error instanceof StateError)) throw error;
    sendDaprError(
      response,
      statusFor(context, error),
      "ERR_STATE_DELETE",
      `failed deleting state with key ${key}: ${error.message}`,
    );
    return;
  }
  sendEmpty(response);
}

async function transaction(
  context: SidecarContext,
  request: IncomingMessage,
  response: ServerResponse,
  storeName: string,
  queryMetadata: Record<string, string>,
): Promise<void> {
  const body = await parseJsonBody(request, response, transactionBodySchema);
  if (body === undefined) return;
  const sharedMetadata = { ...queryMetadata, ...body.metadata };
  const operations: StateOperation[] = [];
  for (const { operation, request: item } of body.operations) {
    const invalid = invalidKeyReason(item.key);
    if (invalid !== undefined) {
      sendDaprError(response, 400, "ERR_MALFORMED_REQUEST", invalid, "DAPR_STATE_ILLEGAL_KEY");
      return;
    }
    switch (operation) {
      case "upsert":
        operations.push(toSetOperation(context, item, sharedMetadata, true));
        break;
      case "delete":
        operations.push({ kind: "delete", key: storageKey(context, item.key), etag: item.etag });
        break;
      default:
        sendDaprError(
          response,
          400,
          "ERR_NOT_SUPPORTED_STATE_OPERATION",
          `operation type ${operation} not supported`,
        );
        return;
    }
  }
  try {
    context.broker.internals.state.apply(storeName, operations);
  } catch (error) {
    if (!(error instanceof StateError)) throw error;
    // daprd answers every failed transaction with 500, ETag mismatches included
    // (dapr/dapr v1.16.5 pkg/api/http/http.go onPostStateTransaction: StatusInternalServerError).
    sendDaprError(
      response,
      500,
      "ERR_STATE_TRANSACTION",
      `error while executing state transaction: ${error.message}`,
    );
    return;
  }
  sendEmpty(response);
}

function toSetOperation(
  context: SidecarContext,
  item: StateItem,
  defaults: Record<string, string>,
  inTransaction: boolean,
): StateOperation {
  return {
    kind: "set",
    key: storageKey(context, item.key),
    value: item.value,
    etag: item.etag,
    concurrency: item.options?.concurrency,
    inTransaction,
    metadata: { ...defaults, ...item.metadata },
  };
}

function statusFor(context: SidecarContext, error: StateError): number {
  switch (error.kind) {
    case "etag-mismatch":
      return 409;
    case "first-write-conflict":
      // DynamoDB's failed `attribute_not_exists` condition is never an ETag error: always a 500.
      return context.broker.options.stateStoreKind === "dynamodb"
        ? 500
        : context.broker.options.stateFirstWriteConflictStatus;
    case "invalid-metadata":
    case "timeout":
      return 500;
    default:
      return assertNever(error.kind);
  }
}

/** Dapr's default `keyPrefix: appid` strategy. */
function storageKey(context: SidecarContext, key: string): string {
  return `${context.appId}||${key}`;
}

function invalidKeyReason(key: string): string | undefined {
  if (key === "") return "state key is empty";
  if (key.includes("||")) return `input key/keyPrefix '${key}' can't contain '||'`;
  return undefined;
}

async function parseJsonBody<T>(
  request: IncomingMessage,
  response: ServerResponse,
  schema: z.ZodType<T>,
): Promise<T | undefined> {
  const raw = (await readBody(request)).toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    sendDaprError(
      response,
      400,
      "ERR_MALFORMED_REQUEST",
      `failed deserializing HTTP body: ${(error as Error).message}`,
    );
    return undefined;
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    sendDaprError(
      response,
      400,
      "ERR_MALFORMED_REQUEST",
      `invalid request body: ${z.prettifyError(parsed.error).replaceAll("\n", "; ")}`,
    );
    return undefined;
  }
  return parsed.data;
}

function assertNever(value: never): never {
  throw new Error(`unexpected value ${JSON.stringify(value)}`);
}
