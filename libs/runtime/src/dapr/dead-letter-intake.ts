import type { Topic } from "@matoolkit/domain";
import type { AnyKysely } from "../any-kysely.ts";
import type { Logger } from "../logger.ts";
import type { Subscription } from "../ports/index.ts";
import { daprCloudEventSchema, propertiesOf } from "./cloud-event-delivery.ts";
import type { DaprDeliveryStatus } from "./dapr-app-server.ts";
import { recordDeadLetter } from "./dead-letter-table.ts";
import type { DeliveryLedger } from "./delivery-ledger.ts";
import { deadLetterTopicOf } from "./subscription-announcement.ts";

/**
 * Reads `<topic>-deadletter` back into the app's dead-letter table. daprd dead-letters on its own
 * whenever the app cannot take a message: the app was unreachable or failed before its handler
 * ran until the inbound retry policy ran out (the app answers RETRY, never 404, for a route it does
 * not serve: daprd 1.16 drops a 404 without dead-lettering it). daprd then acknowledges the
 * broker, so nothing redelivers it and the app never recorded it; without this intake such a
 * message is invisible to `bus.deadLetters()` and to operators.
 *
 * A copy the app dead-lettered itself (it answered DROP after recording the reason) also arrives
 * here; the ledger marks those handled, so they are skipped and keep the app's reason. Every app id
 * subscribed to a topic receives every dead letter of it, so a copy is recorded only for local
 * subscriptions whose filter matches and that did not handle it.
 */
export const deadLetterRoute = (topic: string): string => `/dapr/deadletters/${topic}`;

/** The `GET /dapr/subscribe` entry that reads one topic's dead letters (itself without one). */
export function deadLetterSubscription(pubsubName: string, topic: string): unknown {
  return {
    pubsubname: pubsubName,
    topic: deadLetterTopicOf(topic),
    routes: { rules: [], default: deadLetterRoute(topic) },
  };
}

export const DAPR_DEAD_LETTER_REASON =
  "dapr.dead_lettered: Dapr dead-lettered the message without the app's verdict (app unreachable or failing before the handler until the inbound retries ran out)";

export const ADOPTED_DEAD_LETTER_REASON =
  "dapr.dead_lettered: dead-lettered in another app (it has no database; its log holds the reason under this message id), or by Dapr without that app's verdict";

/**
 * Another app's topic whose dead letters this app records: the worker on Dapr has no SQL access,
 * so the orchestrator subscribes to `worker-jobs-deadletter` and records them in its table.
 */
export interface AdoptedDeadLetters {
  readonly topic: Topic;
  /** The other app's subscription the message was meant for (from its routing properties). */
  subscriptionOf(properties: Record<string, string>): Subscription | undefined;
}

export function createDeadLetterIntake(args: {
  readonly db: AnyKysely;
  readonly ledger: DeliveryLedger;
  readonly logger: Logger;
  /** Local subscriptions of a topic (the bus's current table). */
  readonly subscriptionsOf: (topic: Topic) => readonly Subscription[];
  /** An adopted topic's subscription for a dead letter no local subscription matches. */
  readonly adoptedSubscriptionOf?: (
    topic: Topic,
    properties: Record<string, string>,
  ) => Subscription | undefined;
  readonly ledgerKey: (topic: Topic, subscription: Subscription, messageId: string) => string;
}): (topic: Topic, raw: unknown) => Promise<DaprDeliveryStatus> {
  const { db, ledger, logger } = args;
  return async (topic, raw) => {
    const parsed = daprCloudEventSchema.safeParse(raw);
    if (!parsed.success) {
      // Without an id there is nothing to record against; redelivering would not change that.
      logger.error({ topic }, "dead letter without a readable CloudEvent: acknowledged, not recorded");
      return "SUCCESS";
    }
    const event = parsed.data;
    const properties = propertiesOf(event);
    const matching = args
      .subscriptionsOf(topic)
      .filter((subscription) =>
        Object.entries(subscription.filter ?? {}).every(([name, value]) => properties[name] === value),
      );
    for (const subscription of matching) {
      // A ledger that cannot be read must not lose the dead letter: record it with no count.
      const known = await ledger
        .inspect(args.ledgerKey(topic, subscription, event.id))
        .catch(() => undefined);
      if (known?.handled === true) continue;
      await recordDeadLetter(db, {
        id: event.id,
        topic,
        subscription: subscription.name,
        body: event.data,
        properties,
        deliveryCount: known?.attempts ?? 0,
        error: DAPR_DEAD_LETTER_REASON,
      });
      logger.error(
        { messageId: event.id, subscription: subscription.name, attempts: known?.attempts },
        "message dead-lettered by Dapr",
      );
    }
    if (matching.length === 0) {
      const adopted = args.adoptedSubscriptionOf?.(topic, properties);
      if (adopted !== undefined) {
        // The other app's delivery ledger is its own (Dapr prefixes state keys by app id): no count.
        await recordDeadLetter(db, {
          id: event.id,
          topic,
          subscription: adopted.name,
          body: event.data,
          properties,
          deliveryCount: 0,
          error: ADOPTED_DEAD_LETTER_REASON,
        });
        logger.error(
          { messageId: event.id, subscription: adopted.name },
          "another app's dead letter recorded",
        );
      }
    }
    return "SUCCESS";
  };
}
