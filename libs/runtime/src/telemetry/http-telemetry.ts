import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
} from "@opentelemetry/semantic-conventions";
import type { Logger } from "../logger.ts";
import type { Metrics } from "./metrics.ts";
import { matoolkitTracer } from "./tracing.ts";

export const REQUEST_ID_HEADER = "x-request-id";
/**
 * An incoming id is kept only if it is a plain token (a gateway's UUID or trace id): anything
 * else (too long, spaces, quotes) could forge log lines or carry data, so we make our own.
 */
const requestIdPattern = /^[A-Za-z0-9._:-]{8,128}$/u;
const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** What express gives a middleware, typed structurally (this library does not depend on express). */
export interface HttpRequest extends IncomingMessage {
  readonly route?: { readonly path?: unknown };
  readonly baseUrl?: string;
}
export interface HttpResponse extends ServerResponse {
  locals: Record<string, unknown>;
  json(body: unknown): unknown;
}

/** Per-request values the middleware leaves in `res.locals` for later handlers. */
export interface RequestTelemetry {
  readonly requestId: string;
  /** The service logger with `requestId` bound: every line about this request uses it. */
  readonly logger: Logger;
}

export function requestTelemetryOf(locals: Record<string, unknown>, fallback: Logger): RequestTelemetry {
  const found = locals.telemetry as RequestTelemetry | undefined;
  return found ?? { requestId: "unknown", logger: fallback };
}

export interface HttpTelemetryOptions {
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/**
 * First middleware of an HTTP app. For each request:
 * - a request id: a valid incoming `X-Request-Id` or a new UUID, echoed in the response header,
 *   bound to a child logger in `res.locals.telemetry`, and added as `requestId` to problem
 *   (application/problem+json) bodies so a caller can quote it;
 * - a SERVER span `<METHOD> <route>` continuing an incoming `traceparent`, active while the
 *   request is handled (so what it writes to the outbox carries it);
 * - at the end, the latency histogram by method, express route pattern (`/api/batches/:id`,
 *   never the raw URL) and status, and a debug log line.
 */
export function httpTelemetry(options: HttpTelemetryOptions) {
  return (req: HttpRequest, res: HttpResponse, next: (error?: unknown) => void): void => {
    const started = process.hrtime.bigint();
    const incoming = req.headers[REQUEST_ID_HEADER];
    const requestId =
      typeof incoming === "string" && requestIdPattern.test(incoming) ? incoming : randomUUID();
    const logger = options.logger.child({ requestId });
    const telemetry: RequestTelemetry = { requestId, logger };
    res.locals.telemetry = telemetry;
    res.setHeader("X-Request-Id", requestId);

    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      const type = res.getHeader("content-type");
      const isProblem = typeof type === "string" && type.startsWith(PROBLEM_CONTENT_TYPE);
      const isObject = typeof body === "object" && body !== null && !Array.isArray(body);
      return json(isProblem && isObject ? { ...body, requestId } : body);
    };

    const method = req.method ?? "GET";
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = matoolkitTracer().startSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method } },
      parent,
    );
    res.once("finish", () => {
      const route = routeOf(req);
      const status = res.statusCode;
      span.updateName(`${method} ${route}`);
      span.setAttribute(ATTR_HTTP_ROUTE, route);
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      options.metrics.httpDuration.observe({ method, route, status: String(status) }, seconds);
      logger.debug({ method, route, status, durationMs: Math.round(seconds * 1000) }, "request completed");
    });
    context.with(trace.setSpan(parent, span), () => next());
  };
}

/** The matched express route pattern, or `unmatched` (a 404 or a request cut short). */
function routeOf(req: HttpRequest): string {
  const path = req.route?.path;
  if (typeof path !== "string") return "unmatched";
  return `${req.baseUrl ?? ""}${path}` || "/";
}
