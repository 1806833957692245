import type { Topic } from "@matoolkit/domain";

/**
 * Subscription names become pg-boss queue names and appear in NOTIFY payloads: keep them to a
 * safe alphabet (Service Bus allows a superset; ours are `orchestrator`, `worker-{workerId}`).
 */
const subscriptionNamePattern = /^[A-Za-z0-9_-]{1,100}$/u;

export function assertSubscriptionName(name: string): void {
  if (!subscriptionNamePattern.test(name)) {
    throw new Error(
      `Invalid subscription name (letters, digits, '-' and '_', at most 100): ${JSON.stringify(name.slice(0, 120))}`,
    );
  }
}

/** One pg-boss queue per (topic, subscription), e.g. `worker-jobs.worker-worker-01`. */
export function subscriptionQueue(topic: Topic, name: string): string {
  return `${topic}.${name}`;
}

/** Its dead-letter queue, e.g. `worker-jobs.worker-worker-01.dlq`. */
export function deadLetterQueue(topic: Topic, name: string): string {
  return `${subscriptionQueue(topic, name)}.dlq`;
}

export function timerQueue(timerName: string): string {
  return `timer.${timerName}`;
}
