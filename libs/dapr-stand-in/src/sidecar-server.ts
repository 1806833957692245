import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { BodyTooLargeError, headerValue, sendDaprError, sendEmpty, sendJson } from "./http-util.ts";
import { handleBulkPublish } from "./bulk-publish-api.ts";
import { handleJob } from "./jobs-api.ts";
import { handlePublish } from "./publish-api.ts";
import type { SidecarContext } from "./sidecar-context.ts";
import { handleState } from "./state-api.ts";

/**
 * The sidecar's HTTP API (what an app reaches at DAPR_HTTP_ENDPOINT): routing, the
 * `dapr-api-token` check (every API but the health endpoints, as daprd does), health, metadata.
 * Until the sidecar has "initialized" (startDelayMs) every endpoint answers 500 not-ready, so an
 * app's wait-for-sidecar loop can be exercised.
 */

export function createSidecarServer(context: SidecarContext): Server {
  return createServer((request, response) => {
    route(context, request, response).catch((error: unknown) => {
      const status = error instanceof BodyTooLargeError ? 413 : 500;
      context.log("error", `${request.method ?? "?"} ${pathOf(request)} failed: ${(error as Error).message}`);
      if (!response.headersSent)
        sendDaprError(response, status, "ERR_STAND_IN_INTERNAL", (error as Error).message);
      else response.destroy();
    });
  });
}

async function route(
  context: SidecarContext,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? "/", "http://stand-in");
  const segments = url.pathname
    .split("/")
    .filter((segment) => segment !== "")
    .map(safeDecode);
  const method = request.method ?? "GET";
  const [version, api, ...rest] = segments;

  if (version === "v1.0" && api === "healthz" && method === "GET") {
    if (rest.length === 0) return health(response, context.isOutboundReady() && context.isAppChannelReady());
    if (rest.length === 1 && rest[0] === "outbound") return health(response, context.isOutboundReady());
  }
  if (!isAuthorized(context, request)) {
    // daprd's token middleware answers with a plain-text 401.
    response.writeHead(401, { "content-type": "text/plain; charset=utf-8" });
    response.end("invalid api token\n");
    return;
  }
  if (!context.isOutboundReady()) {
    sendDaprError(response, 500, "ERR_HEALTH_NOT_READY", "dapr is not ready");
    return;
  }

  if (
    version === "v1.0" &&
    api === "publish" &&
    (method === "POST" || method === "PUT") &&
    rest.length >= 2
  ) {
    const [pubsubName, ...topic] = rest;
    return handlePublish(context, request, response, pubsubName ?? "", topic.join("/"), url.searchParams);
  }
  if (
    version === "v1.0-alpha1" &&
    api === "publish" &&
    (method === "POST" || method === "PUT") &&
    rest[0] === "bulk" &&
    rest.length >= 3
  ) {
    const [, pubsubName, ...topic] = rest;
    return handleBulkPublish(context, request, response, pubsubName ?? "", topic.join("/"), url.searchParams);
  }
  if (version === "v1.0" && api === "state" && rest.length >= 1) {
    const [store, key, ...extra] = rest;
    const storeName = store ?? "";
    if (extra.length === 0) {
      if (key === undefined && (method === "POST" || method === "PUT")) {
        return handleState(context, request, response, storeName, { kind: "save" }, url.searchParams);
      }
      if (key === "transaction" && (method === "POST" || method === "PUT")) {
        return handleState(context, request, response, storeName, { kind: "transaction" }, url.searchParams);
      }
      if (key === "bulk" && (method === "POST" || method === "PUT")) {
        return handleState(context, request, response, storeName, { kind: "bulk-get" }, url.searchParams);
      }
      if (key !== undefined && method === "GET") {
        return handleState(context, request, response, storeName, { kind: "get", key }, url.searchParams);
      }
      if (key !== undefined && method === "DELETE") {
        return handleState(context, request, response, storeName, { kind: "delete", key }, url.searchParams);
      }
    }
  }
  if ((version === "v1.0-alpha1" || version === "v1.0") && api === "jobs" && rest.length === 1) {
    return handleJob(context, request, response, rest[0] ?? "");
  }
  if (version === "v1.0" && api === "metadata" && rest.length === 0 && method === "GET") {
    return sendJson(response, 200, metadata(context));
  }
  sendDaprError(
    response,
    404,
    "ERR_STAND_IN_NOT_EMULATED",
    `${method} ${url.pathname} is not part of the Dapr HTTP API subset the stand-in emulates (see libs/dapr-stand-in/README.md)`,
  );
}

function health(response: ServerResponse, healthy: boolean): void {
  if (healthy) sendEmpty(response);
  else sendDaprError(response, 500, "ERR_HEALTH_NOT_READY", "dapr is not ready");
}

function metadata(context: SidecarContext): Record<string, unknown> {
  const appUrl = context.appUrl === undefined ? undefined : new URL(context.appUrl);
  return {
    id: context.appId,
    runtimeVersion: "stand-in",
    enabledFeatures: [],
    components: [
      ...context.pubsubNames.map((name) => ({
        name,
        // Honouring ScheduledEnqueueTimeUtc is what Azure Service Bus does; the adapter asks for it.
        type: context.honourScheduledEnqueueTime ? "pubsub.azure.servicebus.topics" : "pubsub.in-memory",
        version: "v1",
        capabilities: [],
      })),
      ...context.stateStores.map((name) => ({
        name,
        type: "state.in-memory",
        version: "v1",
        capabilities: ["ETAG", "TRANSACTIONAL", "TTL", "ACTOR"],
      })),
    ],
    subscriptions: context.subscriptions().map((subscription) => ({
      pubsubname: subscription.pubsubName,
      topic: subscription.topic,
      metadata: subscription.metadata,
      rules: subscription.rules.map((rule) => ({ match: rule.match?.source ?? "", path: rule.path })),
      deadLetterTopic: subscription.deadLetterTopic ?? "",
      type: "PROGRAMMATIC",
    })),
    extended: {},
    ...(appUrl === undefined
      ? {}
      : {
          appConnectionProperties: {
            port: Number(appUrl.port),
            protocol: appUrl.protocol.replace(":", ""),
            channelAddress: appUrl.hostname,
          },
        }),
  };
}

function isAuthorized(context: SidecarContext, request: IncomingMessage): boolean {
  if (context.apiToken === undefined) return true;
  const presented = Buffer.from(headerValue(request, "dapr-api-token") ?? "");
  const expected = Buffer.from(context.apiToken);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

function pathOf(request: IncomingMessage): string {
  return new URL(request.url ?? "/", "http://stand-in").pathname;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
