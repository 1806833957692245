import { routingProperties, topics } from "@matoolkit/domain";
import type { MessageBus, Subscription } from "./ports/index.ts";

/**
 * 000 "Subscriptions": the orchestrator's two unfiltered subscriptions and one filtered
 * subscription per worker pool. Every process declares the static part at start, so a publish
 * from the admin API before the orchestrator ever ran is kept, not dropped.
 */
export const orchestratorEventsSubscription = {
  topic: topics.orchestratorEvents,
  name: "orchestrator",
} as const;
export const workerResultsSubscription = { topic: topics.workerResults, name: "orchestrator" } as const;
/** Not in 000: webhook notifications (issue 12), consumed by the orchestrator's notifier. */
export const notificationsSubscription = { topic: topics.notifications, name: "notifier" } as const;

export function workerJobsSubscription(workerId: string): Subscription {
  return {
    topic: topics.workerJobs,
    name: `worker-${workerId}`,
    filter: { [routingProperties.workerId]: workerId },
  };
}

export async function declareStaticTopology(bus: MessageBus): Promise<void> {
  await bus.declareSubscription(orchestratorEventsSubscription);
  await bus.declareSubscription(workerResultsSubscription);
  await bus.declareSubscription(notificationsSubscription);
}

export async function declareWorkerPools(bus: MessageBus, workerIds: Iterable<string>): Promise<void> {
  for (const workerId of new Set(workerIds)) await bus.declareSubscription(workerJobsSubscription(workerId));
}
