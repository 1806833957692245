import type { Logger } from "../logger.ts";
import type { RecurringTimer, TimerHandler, Timers } from "../ports/index.ts";
import type { DeliverLater } from "./dapr-message-bus.ts";
import type { DaprStateStore } from "./dapr-state-store.ts";
import { createGuardedTick } from "./guarded-tick.ts";

export interface DelayedMessageTimers extends Timers {
  readonly deliverLater: DeliverLater;
}

/**
 * Timers for environments without the Jobs API (Azure Container Apps' managed Dapr):
 * - a delayed message is published now with `ScheduledEnqueueTimeUtc`, which Azure Service Bus
 *   honours by enqueueing it at that time (brokers that ignore it deliver at once: use this
 *   adapter with Service Bus only);
 * - a recurring timer is an interval in every replica; the guarded tick (state store slot and
 *   lease keys) lets one replica run each period.
 */
export function createDelayedMessageTimers(options: {
  readonly state: DaprStateStore;
  readonly logger: Logger;
}): DelayedMessageTimers {
  const logger = options.logger.child({ component: "dapr-delayed-timers" });
  const intervals: NodeJS.Timeout[] = [];
  const ticks: Array<{ idle(): Promise<void> }> = [];
  return {
    async scheduleRecurring(timer: RecurringTimer, handler: TimerHandler) {
      const tick = createGuardedTick({ state: options.state, logger, ...timer, handler });
      ticks.push(tick);
      const fire = () =>
        void tick
          .run(new Date())
          .catch((error: unknown) =>
            logger.warn({ err: error, timer: timer.name }, "timer could not reach the state store"),
          );
      intervals.push(setTimeout(fire, 0), setInterval(fire, timer.everySeconds * 1000));
    },
    async deliverLater(message, publishNow) {
      // Service Bus reads this as an HTTP date (RFC 1123, GMT): whole seconds, so round up
      // (a check delivered a little late is harmless; one delivered early is not).
      const at = new Date(Math.ceil(message.deliverAt.getTime() / 1000) * 1000);
      await publishNow(message, { ScheduledEnqueueTimeUtc: at.toUTCString() });
    },
    async stop() {
      for (const interval of intervals) clearInterval(interval);
      await Promise.all(ticks.map((tick) => tick.idle()));
    },
  };
}
