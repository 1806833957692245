import { context, createContextKey, propagation, ROOT_CONTEXT, type Context } from "@opentelemetry/api";

/**
 * Application properties the telemetry adds to a message (never routing properties: filters
 * ignore them). The W3C Trace Context pair keeps its header names, so a Service Bus consumer
 * outside this code base (or Dapr's own tracing) reads the same values.
 */
export const telemetryProperties = {
  traceparent: "traceparent",
  tracestate: "tracestate",
  /** ISO time the message was queued (outbox enqueue, or publish): queue lag starts here. */
  publishedAt: "published-at",
  /** ISO time a delayed message was due (its deliverAt): timer lag starts here. */
  dueAt: "due-at",
} as const;

/**
 * The properties plus the active context's `traceparent`/`tracestate` (W3C Trace Context, through
 * the global propagator). Properties already set win: a message read back from the outbox keeps
 * the trace of the request that wrote it. Without tracing started (no propagator registered) it
 * adds nothing.
 */
export function withTraceContext(
  properties: Readonly<Record<string, string>>,
  from: Context = context.active(),
): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(from, carrier);
  const added: Record<string, string> = {};
  for (const name of [telemetryProperties.traceparent, telemetryProperties.tracestate]) {
    const value = carrier[name];
    if (value !== undefined && value !== "" && properties[name] === undefined) added[name] = value;
  }
  return { ...properties, ...added };
}

/** The remote parent a message names (its `traceparent`), on an empty context. */
export function traceContextOf(properties: Readonly<Record<string, string | undefined>>): Context {
  const carrier: Record<string, string> = {};
  for (const name of [telemetryProperties.traceparent, telemetryProperties.tracestate]) {
    const value = properties[name];
    if (typeof value === "string" && value !== "") carrier[name] = value;
  }
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/**
 * When a message was published, for an adapter whose deliveries cannot carry our properties
 * (Dapr delivers the CloudEvent: its `time`, not the broker's application properties). The
 * adapter runs the handler in a context holding it; the instrumented bus reads it there.
 */
const publishedAtKey = createContextKey("matoolkit.message.published-at");

export function withPublishedAt(parent: Context, publishedAt: Date | undefined): Context {
  return publishedAt === undefined ? parent : parent.setValue(publishedAtKey, publishedAt);
}

export function publishedAtOf(active: Context): Date | undefined {
  const value = active.getValue(publishedAtKey);
  return value instanceof Date ? value : undefined;
}

/** An ISO time property, or undefined when absent or unreadable (messages are a boundary). */
export function timeProperty(properties: Readonly<Record<string, string>>, name: string): Date | undefined {
  const value = properties[name];
  if (value === undefined) return undefined;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? undefined : time;
}
