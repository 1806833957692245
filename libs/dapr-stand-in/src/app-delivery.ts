import { AppChannelError, type AppChannel, type AppResponse } from "./app-channel.ts";
import { CLOUD_EVENT_CONTENT_TYPE, hasExpired } from "./cloud-event.ts";
import type { BrokerMessage, Consumer, DeliveryAttempt, DeliveryDisposition } from "./pubsub.ts";
import { chooseRoute, type Subscription } from "./subscriptions.ts";

/**
 * How daprd hands a subscribed message to its app over HTTP (pub/sub API reference, "Provide
 * route(s) for Dapr to deliver topic events", and daprd's subscription handler):
 * - an expired event (`expiration` passed) is dropped, and forwarded to the dead-letter topic;
 * - routing rules pick the path; no matching rule drops the message *and forwards it to the
 *   dead-letter topic if one is set*; a rule that fails to evaluate (e.g. a missing field) goes to
 *   the dead-letter topic at once, or is redelivered when there is none;
 * - `POST <app><path>` with the CloudEvent as `application/cloudevents+json`;
 * - 2xx with an empty or unparsable body, no `status`, or `SUCCESS` acknowledges; `RETRY` and any
 *   unknown status are retried; `DROP` acknowledges and forwards to the dead-letter topic;
 * - 404 is non-retriable, and what happens then depends on the version: daprd 1.16 acknowledges
 *   and DROPS the message without dead-lettering it (dapr/dapr v1.16.5
 *   pkg/runtime/subscription/postman/http/http.go, the StatusNotFound branch returns nil), while
 *   1.17+ returns ErrMessageDropped, which subscription.go forwards to the dead-letter topic. The
 *   stand-in does what 1.16 does: the message is gone, recorded as a `drop` with status 404 and no
 *   `deadLetteredTo`, and listed in `broker.undelivered()` (reason `dropped-on-404`);
 *   any other status or a connection error is retried;
 * - once retries are exhausted the message goes to the dead-letter topic, if any.
 * Note: daprd without a resiliency retry policy dead-letters on the *first* failure; the stand-in's
 * `maxDeliveryAttempts` plays the role of the pub/sub component's inbound retry policy.
 */

export type DeliveryOutcome = "success" | "retry" | "drop" | "error" | "no-route" | "expired";

export interface DeliveryRecord {
  readonly appId: string;
  readonly sidecarId: string;
  readonly pubsubName: string;
  readonly topic: string;
  readonly path: string | undefined;
  readonly cloudEventId: string;
  readonly attempt: number;
  readonly outcome: DeliveryOutcome;
  readonly httpStatus: number | undefined;
  /** Why a delivery failed or was dropped, when there is more to say than the outcome. */
  readonly detail: string | undefined;
  /** The dead-letter topic the message was forwarded to after this attempt, if it was. */
  readonly deadLetteredTo: string | undefined;
  readonly at: Date;
}

export interface SubscriptionConsumerDependencies {
  readonly appId: string;
  readonly sidecarId: string;
  readonly subscription: Subscription;
  readonly channel: AppChannel;
  readonly now: () => Date;
  forwardToDeadLetter(message: BrokerMessage, deadLetterTopic: string): void;
  record(record: DeliveryRecord): void;
}

type AppVerdict =
  | {
      readonly outcome: "success" | "drop";
      readonly retriable: false;
      readonly httpStatus: number;
      readonly detail?: string;
      /** A dropped message goes to the dead-letter topic (DROP), or is lost (404 on daprd 1.16). */
      readonly deadLetter?: boolean;
    }
  | {
      readonly outcome: "retry" | "error";
      readonly retriable: true;
      readonly httpStatus: number | undefined;
      readonly detail?: string;
    };

export function createSubscriptionConsumer(dependencies: SubscriptionConsumerDependencies): Consumer {
  const { subscription } = dependencies;
  return {
    appId: dependencies.appId,
    sidecarId: dependencies.sidecarId,
    pubsubName: subscription.pubsubName,
    topic: subscription.topic,
    deliver: (attempt) => deliver(dependencies, attempt),
  };
}

async function deliver(
  dependencies: SubscriptionConsumerDependencies,
  attempt: DeliveryAttempt,
): Promise<DeliveryDisposition> {
  const { subscription } = dependencies;
  const { message } = attempt;
  const event = message.cloudEvent;
  const record = (
    fields: Pick<DeliveryRecord, "path" | "outcome" | "httpStatus" | "detail" | "deadLetteredTo">,
  ): void =>
    dependencies.record({
      appId: dependencies.appId,
      sidecarId: dependencies.sidecarId,
      pubsubName: message.pubsubName,
      topic: message.topic,
      cloudEventId: event.id,
      attempt: attempt.attempt,
      at: dependencies.now(),
      ...fields,
    });
  const deadLetter = (): string | undefined => {
    if (subscription.deadLetterTopic === undefined) return undefined;
    dependencies.forwardToDeadLetter(message, subscription.deadLetterTopic);
    return subscription.deadLetterTopic;
  };

  if (hasExpired(event, dependencies.now())) {
    record({
      path: undefined,
      outcome: "expired",
      httpStatus: undefined,
      detail: `expired at ${String(event.expiration)}`,
      deadLetteredTo: deadLetter(),
    });
    return "ack";
  }

  const route = chooseRoute(subscription, event);
  switch (route.kind) {
    case "no-match":
      record({
        path: undefined,
        outcome: "no-route",
        httpStatus: undefined,
        detail: "no routing rule matched and no default route",
        deadLetteredTo: deadLetter(),
      });
      return "ack";
    case "error":
      // daprd dead-letters a message whose rules fail to evaluate right away; without a
      // dead-letter topic the error goes back to the broker, which redelivers.
      if (subscription.deadLetterTopic !== undefined) {
        record({
          path: undefined,
          outcome: "error",
          httpStatus: undefined,
          detail: route.error,
          deadLetteredTo: deadLetter(),
        });
        return "ack";
      }
      return failed(
        attempt,
        subscription,
        record,
        deadLetter,
        {
          outcome: "error",
          retriable: true,
          httpStatus: undefined,
          detail: route.error,
        },
        undefined,
      );
    case "path":
      break;
    default:
      return assertNever(route);
  }

  let response: AppResponse;
  try {
    response = await dependencies.channel.request(
      "POST",
      route.path,
      { contentType: CLOUD_EVENT_CONTENT_TYPE, payload: JSON.stringify(event) },
      deliveryHeaders(message),
    );
  } catch (error) {
    if (error instanceof AppChannelError && error.aborted) return "abandon";
    return failed(
      attempt,
      subscription,
      record,
      deadLetter,
      {
        outcome: "error",
        retriable: true,
        httpStatus: undefined,
        detail: (error as Error).message,
      },
      route.path,
    );
  }

  const verdict = interpretAppResponse(response);
  if (!verdict.retriable) {
    const forwarded = verdict.outcome === "drop" && verdict.deadLetter !== false ? deadLetter() : undefined;
    record({
      path: route.path,
      outcome: verdict.outcome,
      httpStatus: verdict.httpStatus,
      detail: verdict.detail,
      deadLetteredTo: forwarded,
    });
    return verdict.deadLetter === false ? "dropped" : "ack";
  }
  return failed(attempt, subscription, record, deadLetter, verdict, route.path);
}

function failed(
  attempt: DeliveryAttempt,
  subscription: Subscription,
  record: (
    fields: Pick<DeliveryRecord, "path" | "outcome" | "httpStatus" | "detail" | "deadLetteredTo">,
  ) => void,
  deadLetter: () => string | undefined,
  verdict: Extract<AppVerdict, { retriable: true }>,
  path: string | undefined,
): DeliveryDisposition {
  const exhausted = attempt.isFinalAttempt && subscription.deadLetterTopic !== undefined;
  const deadLetteredTo = exhausted ? deadLetter() : undefined;
  record({
    path,
    outcome: verdict.outcome,
    httpStatus: verdict.httpStatus,
    detail: verdict.detail,
    deadLetteredTo,
  });
  return exhausted ? "ack" : "retry";
}

export function interpretAppResponse(response: AppResponse): AppVerdict {
  const { status } = response;
  if (status >= 200 && status <= 299) {
    const appStatus = statusField(response.body);
    switch (appStatus) {
      case undefined:
      case "":
      case "SUCCESS":
        return { outcome: "success", retriable: false, httpStatus: status };
      case "RETRY":
        return { outcome: "retry", retriable: true, httpStatus: status };
      case "DROP":
        return { outcome: "drop", retriable: false, httpStatus: status, detail: "app answered DROP" };
      default:
        return {
          outcome: "retry",
          retriable: true,
          httpStatus: status,
          detail: `unknown status "${appStatus}" (retried like daprd)`,
        };
    }
  }
  // daprd 1.16: acknowledged and dropped, never dead-lettered (dapr/dapr v1.16.5
  // pkg/runtime/subscription/postman/http/http.go, `if statusCode == nethttp.StatusNotFound`
  // logs "non-retriable error" and returns nil). Only 1.17+ dead-letters it.
  if (status === 404)
    return {
      outcome: "drop",
      retriable: false,
      httpStatus: status,
      detail: "app answered 404 (daprd 1.16: non-retriable, acknowledged and dropped without dead-lettering)",
      deadLetter: false,
    };
  return { outcome: "error", retriable: true, httpStatus: status };
}

/** The `status` field of a JSON object body; undefined when daprd would skip the status check. */
function statusField(body: string): string | undefined {
  if (body.trim() === "") return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
    const status = (parsed as Record<string, unknown>).status;
    if (status === undefined || status === null) return undefined;
    // A non-string status fails Go's JSON decoding, which daprd treats as "skip the status check".
    return typeof status === "string" ? status : undefined;
  } catch {
    return undefined;
  }
}

function deliveryHeaders(message: BrokerMessage): Record<string, string> {
  const headers: Record<string, string> = { pubsubname: message.pubsubName };
  const traceparent = message.cloudEvent.traceparent;
  if (typeof traceparent === "string" && traceparent !== "") headers.traceparent = traceparent;
  return headers;
}

function assertNever(value: never): never {
  throw new Error(`unexpected route decision ${JSON.stringify(value)}`);
}
