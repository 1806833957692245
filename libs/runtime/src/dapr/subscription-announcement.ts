import { routingProperties, type Topic } from "@matoolkit/domain";
import type { Subscription } from "../ports/index.ts";

/** One entry of `GET /dapr/subscribe` (the v2 shape with routing rules). */
export interface DaprSubscriptionEntry {
  readonly pubsubname: string;
  readonly topic: string;
  readonly routes: {
    readonly rules: ReadonlyArray<{ match: string; path: string }>;
    readonly default: string;
  };
  readonly deadLetterTopic: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

export const deadLetterTopicOf = (topic: string): string => `${topic}-deadletter`;
export const topicRoute = (topic: string): string => `/dapr/topics/${topic}`;
export const subscriptionRoute = (topic: string, name: string): string =>
  `/dapr/topics/${topic}/${encodeURIComponent(name)}`;

/** Default route of a topic whose subscriptions here are all filtered: acknowledged, not handled. */
export const unmatchedRoute = (topic: string): string => `/dapr/unmatched/${topic}`;

/**
 * Builds the app's programmatic subscriptions. Dapr delivers each message once per app id (the
 * app is the consumer group), to the path of the first rule that matches, else the default:
 * - a filtered subscription (a worker's `WorkerId = 'worker-01'`, 000) becomes a routing rule, so
 *   the sidecar hands this app's handler only its own jobs;
 * - an unfiltered one becomes the default route;
 * - with only filtered ones, the default route acknowledges what they do not match (another
 *   worker's job): without a default, daprd would forward every such message to the
 *   dead-letter topic, once per worker pool;
 * - `catchAllTopics` adds a default route on topics with no subscription yet (subscriptions made
 *   after the sidecar read this list are then matched in the app; the contract tests use it).
 * Paths only steer Dapr: whatever path a message arrives on, the app hands it to every local
 * subscription of the topic whose filter matches.
 */
export function announceSubscriptions(args: {
  readonly pubsubName: string;
  readonly subscriptions: readonly Subscription[];
  readonly catchAllTopics: readonly Topic[];
}): DaprSubscriptionEntry[] {
  const byTopic = new Map<string, Subscription[]>();
  for (const topic of args.catchAllTopics) byTopic.set(topic, []);
  for (const subscription of args.subscriptions) {
    byTopic.set(subscription.topic, [...(byTopic.get(subscription.topic) ?? []), subscription]);
  }
  return [...byTopic.entries()].map(([topic, subscriptions]) => {
    const isFiltered = (s: Subscription) => Object.keys(s.filter ?? {}).length > 0;
    const unfiltered = subscriptions.find((s) => !isFiltered(s));
    const defaultRoute =
      unfiltered !== undefined
        ? subscriptionRoute(topic, unfiltered.name)
        : args.catchAllTopics.includes(topic as Topic)
          ? topicRoute(topic)
          : unmatchedRoute(topic);
    return {
      pubsubname: args.pubsubName,
      topic,
      routes: {
        rules: subscriptions
          .filter(isFiltered)
          .map((s) => ({ match: celMatch(s.filter ?? {}), path: subscriptionRoute(topic, s.name) })),
        default: defaultRoute,
      },
      deadLetterTopic: deadLetterTopicOf(topic),
    };
  });
}

/** `WorkerId = 'x'` as Dapr's CEL over the CloudEvent (see propertiesOf for the mapping). */
export function celMatch(filter: Readonly<Record<string, string>>): string {
  return Object.entries(filter)
    .map(([name, value]) => {
      const field = name === routingProperties.messageType ? "event.type" : `event.data.${safeField(name)}`;
      return `${field} == ${JSON.stringify(value)}`;
    })
    .join(" && ");
}

function safeField(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new Error(`Filter property "${name}" cannot be expressed as a Dapr routing rule`);
  }
  return name;
}
