import type { Topic } from "@matoolkit/domain";
import type { Delivery, MessageBus } from "@matoolkit/runtime";

/** How many deliveries the decorator handed to their handler twice, and how. */
export interface DoubledDeliveries {
  concurrent: number;
  sequential: number;
  readonly byTopic: Map<Topic, number>;
}

/**
 * The real bus, except that EVERY delivery on every subscription reaches its handler twice (the
 * approach of services/all-in-one/src/duplicate-delivery.e2e.test.ts, at drill size). Half the
 * messages (by id) get both copies at the same time, a race between two consumers; the other
 * half one after the other, a redelivery after a lock expired once the first was handled. The
 * choice is stable per message id, so a bus redelivery of the same message doubles the same way.
 */
export function deliveringEverythingTwice(bus: MessageBus, tally: DoubledDeliveries): MessageBus {
  return {
    ...bus,
    subscribe: (subscription, handler) =>
      bus.subscribe(subscription, async (delivery: Delivery) => {
        tally.byTopic.set(delivery.topic, (tally.byTopic.get(delivery.topic) ?? 0) + 1);
        if (hash(delivery.id) % 2 === 0) {
          tally.concurrent++;
          await Promise.all([handler(delivery), handler(delivery)]);
        } else {
          tally.sequential++;
          await handler(delivery);
          await handler({ ...delivery, deliveryCount: delivery.deliveryCount + 1 });
        }
      }),
  };
}

function hash(text: string): number {
  let value = 0;
  for (let i = 0; i < text.length; i++) value = (Math.imul(value, 31) + text.charCodeAt(i)) >>> 0;
  return value;
}
