import { toSafeError, routingProperties } from "@matoolkit/domain";
import { context, SpanKind, SpanStatusCode, trace, type Context, type Span } from "@opentelemetry/api";
import type { AnyKysely } from "../any-kysely.ts";
import type {
  Delivery,
  DeliveryHandler,
  DeliverySettlement,
  MessageBus,
  OutgoingMessage,
  Subscription,
  TransactionalBatchHandler,
  TransactionalSubscription,
} from "../ports/index.ts";
import { DeliveryDeferredError } from "../ports/index.ts";
import { processMetrics, type Metrics } from "./metrics.ts";
import {
  publishedAtOf,
  telemetryProperties,
  timeProperty,
  traceContextOf,
  withTraceContext,
} from "./trace-properties.ts";
import { matoolkitTracer } from "./tracing.ts";

/**
 * OpenTelemetry messaging attribute names (semantic conventions 1.x, still "development" there,
 * so copied rather than imported from the unstable entry point, as OpenTelemetry recommends).
 */
const attributes = {
  system: "messaging.system",
  destination: "messaging.destination.name",
  messageId: "messaging.message.id",
  operationType: "messaging.operation.type",
  operationName: "messaging.operation.name",
  consumerGroup: "messaging.consumer.group.name",
  errorType: "error.type",
  messageType: "matoolkit.message.type",
  deliveryCount: "matoolkit.message.delivery_count",
} as const;

export interface InstrumentBusOptions {
  /** `messaging.system` of the spans: `pg-boss` (embedded) or `dapr`. */
  readonly system: string;
  /** Default: the process-wide instruments (processMetrics). */
  readonly metrics?: Metrics;
}

/**
 * The one place both adapters' messages get their telemetry: a MessageBus wrapped so that
 * - every publish is a `<topic> publish` span (PRODUCER) whose parent is the trace the message
 *   already carries (an outbox row keeps the context of the transaction that wrote it) or else
 *   the active one, and the message carries that span as its `traceparent`, plus `published-at`
 *   and, for a delayed message, `due-at`;
 * - every delivery runs its handler in a `<topic> process` span (CONSUMER) whose parent is the
 *   message's `traceparent` (embedded: a property of the pg-boss job; Dapr: the CloudEvent's
 *   trace context, made the active context by the adapter), and its first delivery records the
 *   queue lag and, for a delayed message, the timer lag.
 * Span attributes name topics, subscriptions, message ids and types: never a body field (UPNs).
 * Extra members of the wrapped bus (the Dapr bus's publishNow) are kept.
 */
export function instrumentMessageBus<B extends MessageBus>(bus: B, options: InstrumentBusOptions): B {
  const metrics = options.metrics ?? processMetrics();

  const startPublish = (message: OutgoingMessage): { message: OutgoingMessage; span: Span } => {
    const carried = message.properties[telemetryProperties.traceparent] !== undefined;
    const parent = carried ? traceContextOf(message.properties) : context.active();
    const span = matoolkitTracer().startSpan(
      `${message.topic} publish`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          ...common(options.system, message.topic, message.id, message.properties),
          [attributes.operationType]: "send",
          [attributes.operationName]: "publish",
        },
      },
      parent,
    );
    // The message names the publish span as its parent-to-be (replacing what it carried, which is
    // that span's own parent). Without tracing started nothing is injected and it keeps its own.
    const injected = withTraceContext({}, trace.setSpan(parent, span));
    const properties: Record<string, string> = { ...message.properties };
    if (injected[telemetryProperties.traceparent] !== undefined) {
      delete properties[telemetryProperties.tracestate];
      Object.assign(properties, injected);
    }
    properties[telemetryProperties.publishedAt] ??= new Date().toISOString();
    if (message.deliverAt !== undefined) {
      properties[telemetryProperties.dueAt] ??= message.deliverAt.toISOString();
    }
    return { message: { ...message, properties }, span };
  };

  const finish = (spans: readonly Span[], error?: unknown): void => {
    for (const span of spans) {
      if (error !== undefined) fail(span, error);
      span.end();
    }
  };

  /** The queue lag and timer lag of a first delivery (a redelivery's wait is the retry delay, not lag). */
  const observeLag = (subscription: Subscription, delivery: Delivery, active: Context): void => {
    if (delivery.deliveryCount !== 1) return;
    const now = Date.now();
    const dueAt = timeProperty(delivery.properties, telemetryProperties.dueAt);
    const publishedAt =
      timeProperty(delivery.properties, telemetryProperties.publishedAt) ?? publishedAtOf(active);
    const since = [publishedAt, dueAt].flatMap((time) => (time === undefined ? [] : [time.getTime()]));
    if (since.length > 0) {
      metrics.messageAge.observe(
        { topic: delivery.topic, subscription: subscription.name },
        Math.max(0, now - Math.max(...since)) / 1000,
      );
    }
    if (dueAt !== undefined) {
      metrics.timerLag.observe(
        { message_type: delivery.properties[routingProperties.messageType] ?? "unknown" },
        Math.max(0, now - dueAt.getTime()) / 1000,
      );
    }
  };

  /** The delivery's `<topic> process` span, child of the trace the message carries; and its lag. */
  const startProcess = (subscription: Subscription, delivery: Delivery): { span: Span; parent: Context } => {
    const active = context.active();
    const parent: Context =
      delivery.properties[telemetryProperties.traceparent] === undefined
        ? active
        : traceContextOf(delivery.properties);
    observeLag(subscription, delivery, active);
    const span = matoolkitTracer().startSpan(
      `${delivery.topic} process`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          ...common(options.system, delivery.topic, delivery.id, delivery.properties),
          [attributes.operationType]: "process",
          [attributes.operationName]: "process",
          [attributes.consumerGroup]: subscription.name,
          [attributes.deliveryCount]: delivery.deliveryCount,
        },
      },
      parent,
    );
    return { span, parent };
  };

  const traced = (subscription: Subscription, handler: DeliveryHandler): DeliveryHandler => {
    return async (delivery) => {
      const { span, parent } = startProcess(subscription, delivery);
      try {
        await context.with(trace.setSpan(parent, span), () => handler(delivery));
      } catch (error) {
        // Handed back on shutdown is not a failure of the message.
        if (!(error instanceof DeliveryDeferredError)) fail(span, error);
        throw error;
      } finally {
        span.end();
      }
    };
  };

  /**
   * A transactional batch: a process span per message taken, ended with the batch (failed with it
   * if it throws; its messages then come again through `fallback`, traced as deliveries). What the
   * batch does once it has taken them (the next jobs it publishes, its completion checks after
   * the commit) runs as the first message's span, as a group commit ran in its first delivery's
   * context: the batch runs in a context whose values are set once the messages are known.
   */
  const tracedBatch =
    (subscription: Subscription, handleBatch: TransactionalBatchHandler): TransactionalBatchHandler =>
    async (take) => {
      const spans: Span[] = [];
      const batchContext = new ContextSetLater(context.active());
      try {
        await context.with(batchContext, () =>
          handleBatch(async (trx) => {
            const deliveries = await take(trx);
            for (const delivery of deliveries) {
              const { span, parent } = startProcess(subscription, delivery);
              if (spans.length === 0) batchContext.target = trace.setSpan(parent, span);
              spans.push(span);
            }
            return deliveries;
          }),
        );
      } catch (error) {
        finish(spans, error);
        throw error;
      }
      finish(spans);
    };

  return {
    ...bus,
    async publish(message: OutgoingMessage) {
      const { message: prepared, span } = startPublish(message);
      try {
        await bus.publish(prepared);
      } catch (error) {
        finish([span], error);
        throw error;
      }
      finish([span]);
    },
    async publishMany(messages: readonly OutgoingMessage[]) {
      const started = messages.map(startPublish);
      const spans = started.map((entry) => entry.span);
      try {
        await bus.publishMany(started.map((entry) => entry.message));
      } catch (error) {
        finish(spans, error);
        throw error;
      }
      finish(spans);
    },
    ...(bus.publishInTransaction === undefined
      ? {}
      : {
          publishInTransaction: async (trx: AnyKysely, messages: readonly OutgoingMessage[]) => {
            const started = messages.map(startPublish);
            const spans = started.map((entry) => entry.span);
            try {
              await bus.publishInTransaction!(
                trx,
                started.map((entry) => entry.message),
              );
            } catch (error) {
              finish(spans, error);
              throw error;
            }
            // The span ends with the statement: a rollback later still unpublishes it (no way
            // to know here), as a rolled-back outbox row is never relayed.
            finish(spans);
          },
        }),
    ...(bus.settleDelivery === undefined
      ? {}
      : {
          settleDelivery: async (settlement: DeliverySettlement) => {
            const started = settlement.messages.map(startPublish);
            const spans = started.map((entry) => entry.span);
            let settled: boolean;
            try {
              settled = await bus.settleDelivery!({
                ...settlement,
                messages: started.map((entry) => entry.message),
              });
            } catch (error) {
              finish(spans, error);
              throw error;
            }
            // Not settled: nothing was published; the caller publishes (and traces) the usual way.
            finish(spans);
            return settled;
          },
        }),
    subscribe: (subscription: Subscription, handler: DeliveryHandler) =>
      bus.subscribe(subscription, traced(subscription, handler)),
    ...(bus.consumeInTransaction === undefined
      ? {}
      : {
          consumeInTransaction: (
            subscription: TransactionalSubscription,
            handleBatch: TransactionalBatchHandler,
            fallback: DeliveryHandler,
          ) =>
            bus.consumeInTransaction!(
              subscription,
              tracedBatch(subscription, handleBatch),
              traced(subscription, fallback),
            ),
        }),
  };
}

/**
 * A Context (an interface of @opentelemetry/api: values by key, copies on write) reading through
 * to `target`, which may be replaced while code runs with this context active: the only way to
 * make a span the active one for code already running in `context.with` (a batch's handler,
 * after it took its messages), short of AsyncLocalStorage internals.
 */
class ContextSetLater implements Context {
  constructor(public target: Context) {}
  getValue(key: symbol): unknown {
    return this.target.getValue(key);
  }
  setValue(key: symbol, value: unknown): Context {
    return this.target.setValue(key, value);
  }
  deleteValue(key: symbol): Context {
    return this.target.deleteValue(key);
  }
}

function common(
  system: string,
  topic: string,
  id: string,
  properties: Readonly<Record<string, string>>,
): Record<string, string> {
  const type = properties[routingProperties.messageType];
  return {
    [attributes.system]: system,
    [attributes.destination]: topic,
    [attributes.messageId]: id,
    ...(type === undefined ? {} : { [attributes.messageType]: type }),
  };
}

/** The stable reason only: an error's message may quote member data. */
function fail(span: Span, error: unknown): void {
  const { reason } = toSafeError(error);
  span.setAttribute(attributes.errorType, reason);
  span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
}
