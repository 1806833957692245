import { z } from "zod";
import { compileCel, type CompiledCel } from "./cel-subset.ts";

/**
 * Programmatic subscriptions as returned by the app's `GET /dapr/subscribe`: the v1 shape
 * `{pubsubname, topic, route}` and the v2 shape `{pubsubname, topic, routes: {rules: [{match, path}],
 * default}}`, plus `deadLetterTopic` and `metadata`. Rules are tried in order; a rule without a match
 * (or the default route, appended last) matches everything. Entries the stand-in cannot honour
 * faithfully are rejected with a reason instead of being half-applied.
 */

export interface RoutingRule {
  /** undefined for the default route. */
  readonly match: CompiledCel | undefined;
  readonly path: string;
}

export interface Subscription {
  readonly pubsubName: string;
  readonly topic: string;
  readonly rules: readonly RoutingRule[];
  readonly deadLetterTopic: string | undefined;
  readonly metadata: Readonly<Record<string, string>>;
}

export interface DiscoveryResult {
  readonly subscriptions: readonly Subscription[];
  readonly errors: readonly string[];
}

const ruleSchema = z.looseObject({ match: z.string().optional(), path: z.string() });

const subscriptionSchema = z.looseObject({
  pubsubname: z.string().min(1),
  topic: z.string().min(1),
  route: z.string().optional(),
  routes: z
    .looseObject({
      rules: z.array(ruleSchema).optional(),
      default: z.string().optional(),
    })
    .optional(),
  deadLetterTopic: z.string().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  bulkSubscribe: z.looseObject({ enabled: z.boolean().optional() }).optional(),
});

export function parseSubscriptions(body: unknown, pubsubNames: readonly string[]): DiscoveryResult {
  if (!Array.isArray(body)) {
    return { subscriptions: [], errors: ["GET /dapr/subscribe did not return a JSON array"] };
  }
  const subscriptions: Subscription[] = [];
  const errors: string[] = [];
  body.forEach((entry: unknown, index) => {
    const parsed = subscriptionSchema.safeParse(entry);
    if (!parsed.success) {
      errors.push(
        `subscription #${index} is malformed: ${z.prettifyError(parsed.error).replaceAll("\n", "; ")}`,
      );
      return;
    }
    const result = toSubscription(parsed.data, pubsubNames);
    if (typeof result === "string") {
      errors.push(
        `subscription #${index} (${parsed.data.pubsubname}/${parsed.data.topic}) rejected: ${result}`,
      );
      return;
    }
    if (
      subscriptions.some((other) => other.pubsubName === result.pubsubName && other.topic === result.topic)
    ) {
      errors.push(
        `subscription #${index} rejected: duplicate subscription to ${result.pubsubName}/${result.topic}`,
      );
      return;
    }
    subscriptions.push(result);
  });
  return { subscriptions, errors };
}

function toSubscription(
  entry: z.infer<typeof subscriptionSchema>,
  pubsubNames: readonly string[],
): Subscription | string {
  if (!pubsubNames.includes(entry.pubsubname)) {
    return `pubsub "${entry.pubsubname}" is not a component of this sidecar (configured: ${pubsubNames.join(", ") || "none"})`;
  }
  if (entry.bulkSubscribe?.enabled === true) return "bulkSubscribe is not emulated by the stand-in";
  if (entry.metadata?.rawPayload?.toLowerCase() === "true")
    return "rawPayload subscriptions are not emulated by the stand-in";

  const rules: RoutingRule[] = [];
  for (const rule of entry.routes?.rules ?? []) {
    if (rule.match === undefined || rule.match.trim() === "") {
      rules.push({ match: undefined, path: normalizePath(rule.path) });
      continue;
    }
    try {
      rules.push({ match: compileCel(rule.match), path: normalizePath(rule.path) });
    } catch (error) {
      return (error as Error).message;
    }
  }
  const defaultPath = entry.routes?.default ?? entry.route;
  if (defaultPath !== undefined && defaultPath !== "")
    rules.push({ match: undefined, path: normalizePath(defaultPath) });
  if (rules.length === 0) return "no route: give route, routes.default or routes.rules";

  return {
    pubsubName: entry.pubsubname,
    topic: entry.topic,
    rules,
    deadLetterTopic: entry.deadLetterTopic === "" ? undefined : entry.deadLetterTopic,
    metadata: entry.metadata ?? {},
  };
}

function normalizePath(path: string): string {
  return path.startsWith("/") ? path : `/${path}`;
}

export type RouteDecision =
  | { readonly kind: "path"; readonly path: string }
  | { readonly kind: "no-match" }
  | { readonly kind: "error"; readonly error: string };

/** The first rule whose match is true decides; an evaluation error stops the search, as in daprd. */
export function chooseRoute(subscription: Subscription, event: unknown): RouteDecision {
  for (const rule of subscription.rules) {
    if (rule.match === undefined) return { kind: "path", path: rule.path };
    const result = rule.match.matches(event);
    if (!result.ok) return { kind: "error", error: `match expression ${rule.match.source}: ${result.error}` };
    if (result.value) return { kind: "path", path: rule.path };
  }
  return { kind: "no-match" };
}
