/**
 * pubsub.jetstream settings that decide whether a matoolkit app receives its topics at all, and
 * whether a message can be dropped without a dead letter (components-contrib
 * pubsub/jetstream/jetstream.go at v1.16.5 and v1.18.0, nats.go v1.39.1 js.go processConsInfo):
 *
 * - The component gives every subscription of a sidecar the same `durableName` and `streamName`.
 *   In one stream that is one consumer, bound to the first topic's subject, and each further
 *   subscription of the app fails ("subject does not match consumer"). So `streamName` must be
 *   unset (each topic is found in a stream of its own), and the durable name must be per app id.
 * - The app's replicas share a durable push consumer only as a queue group of the same name.
 * - A message past the consumer's `maxDeliver` is skipped with an advisory only: never
 *   dead-lettered, so `maxDeliver` stays unset (unlimited); the app and Dapr bound attempts.
 * - The component subscribes without nats.go's ManualAck option, so nats.go acknowledges a
 *   message when the component's callback returns; with `concurrency: parallel` that callback
 *   only starts a goroutine, so every message is acknowledged before the app has it (seen on
 *   real daprd: a sidecar killed mid-delivery left the message acknowledged, never redelivered).
 */
import { componentSchema, type DaprComponent } from "./dapr-config-schemas.ts";
import type { DaprDocument } from "./load-dapr-files.ts";
import { formatYamlPath, type Problem } from "./validate-dapr-files.ts";

export function checkJetStreamConsumers(documents: readonly DaprDocument[]): Problem[] {
  const problems: Problem[] = [];
  for (const document of documents) {
    const parsed = componentSchema.safeParse(document.value);
    if (!parsed.success || parsed.data.spec.type !== "pubsub.jetstream") continue;
    const component: DaprComponent = parsed.data;
    const items = component.spec.metadata;
    const indexOf = (name: string) => items.findIndex((item) => item.name === name);
    const valueOf = (name: string) => {
      const value = items[indexOf(name)]?.value;
      return value === undefined ? undefined : String(value);
    };
    const report = (name: string | undefined, message: string) => {
      const path =
        name === undefined || indexOf(name) < 0 ? ["spec", "metadata"] : ["spec", "metadata", indexOf(name)];
      problems.push({
        file: document.file,
        line: document.lineOf(path),
        path: formatYamlPath(path),
        message,
      });
    };
    if (valueOf("streamName") !== undefined) {
      report(
        "streamName",
        "streamName must be unset: with one stream for every topic, the app's second subscription fails (one durable consumer, bound to the first topic); create one stream per topic instead",
      );
    }
    const durable = valueOf("durableName");
    if (durable === undefined || !durable.includes("{appID}")) {
      report(
        durable === undefined ? undefined : "durableName",
        'durableName must contain "{appID}": each app needs a durable consumer of its own (without one, a restarted sidecar starts a new consumer and replays or skips messages)',
      );
    }
    if (valueOf("queueGroupName") !== durable) {
      report(
        "queueGroupName",
        "queueGroupName must equal durableName: the app's replicas and its next sidecar share the durable consumer only as its queue group",
      );
    }
    const concurrency = valueOf("concurrency");
    if (concurrency !== undefined && concurrency !== "single") {
      report(
        "concurrency",
        'concurrency must be unset or "single": in "parallel" nats.go acknowledges each message before the app has it (the component does not use ManualAck), so a stopped sidecar loses what it held',
      );
    }
    if (valueOf("maxDeliver") !== undefined) {
      report(
        "maxDeliver",
        "maxDeliver must be unset: JetStream skips a message past it without a dead letter; the app's delivery ledger and Dapr's deadLetterTopic bound the attempts",
      );
    }
  }
  return problems;
}
