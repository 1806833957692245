import type { Logger } from "../logger.ts";
import type { DaprHttp } from "./dapr-http.ts";
import { pollSidecarHealth, sidecarHealthProblem, untilAborted } from "./poll-sidecar-health.ts";

export interface WaitForSubscriptionsOptions {
  readonly http: DaprHttp;
  /** Resolves once the sidecar read the app's `GET /dapr/subscribe` (dapr-app-server.ts). */
  readonly subscriptionsRead: Promise<void>;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
}

/**
 * Resolves once the sidecar has subscribed to the app's topics at the broker, so that nothing the
 * app publishes from then on can miss its own subscriptions. Why it matters: on RabbitMQ
 * (components-contrib pubsub.rabbitmq) every topic is a fanout exchange and a subscription is a
 * queue the subscribing sidecar declares and binds when it subscribes; a message published to the
 * exchange before that queue exists is routed nowhere and dropped. The sidecar is usable
 * (`/v1.0/healthz/outbound`) well before that: it reads `GET /dapr/subscribe` only once the app's
 * port answers. Up to Dapr 1.17 the app could not start its workflow worker before then either, so
 * the window was hidden; daprd 1.18 serves workflow calls at once, and an all-in-one start on a
 * new RabbitMQ vhost lost the first outbox message (a batch's first nudge: its phase ran ~56 s
 * late, on the next reconcile and re-check).
 *
 * How: first the sidecar reads the subscriptions (it subscribes right after, in the same pass),
 * then `GET /v1.0/healthz` answers 204. daprd marks itself healthy only at the end of its
 * initialisation, which starts the app's subscriptions synchronously, each one returning once the
 * broker registered its consumer (dapr/dapr pkg/runtime/runtime.go: initRuntime →
 * appHealthChanged → StartAppSubscriptions, then `rtHealthz.Ready()`; the same in 1.16 and 1.18).
 * With app health checks on (compose, Helm, Container Apps), daprd subscribes right after its first
 * successful probe of the app instead, within the same moment; there the apps are separate app ids
 * anyway, and each topic's queue exists from its subscriber's first start on (deploy/README.md).
 */
export async function waitForSidecarSubscriptions(options: WaitForSubscriptionsOptions): Promise<void> {
  // A sidecar that is already healthy finished its initialisation, subscriptions included, with an
  // earlier instance of this app (the app restarted, its sidecar did not: a container crash in a
  // pod, the drills' `app` round). It does not read `GET /dapr/subscribe` again, and its consumers
  // exist at the broker, so waiting for that read would keep the app unready for ever.
  if ((await sidecarHealthProblem(options.http, "/v1.0/healthz")) === undefined) return;
  await untilAborted(options.subscriptionsRead, options.signal);
  await pollSidecarHealth({
    http: options.http,
    path: "/v1.0/healthz",
    logger: options.logger,
    waitingMessage: "waiting for the Dapr sidecar to finish subscribing; not ready until it has",
    signal: options.signal,
    initialDelayMs: options.initialDelayMs ?? 50,
    maxDelayMs: options.maxDelayMs ?? 2_000,
  });
}
