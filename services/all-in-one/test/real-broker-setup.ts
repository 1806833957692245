import {
  createNatsStreams,
  natsView,
  type BrokerView,
  type MetadataOverrides,
} from "@matoolkit/dapr-harness";
import { topics } from "@matoolkit/domain";
import { createTestDatabase } from "@matoolkit/testing";

/** What a real-Dapr profile needs from a broker set up for one run. */
export interface BrokerSetup {
  readonly overrides: MetadataOverrides;
  readonly view: BrokerView;
  /** Publishes straight to the broker (not through a sidecar): a CloudEvent as JSON. */
  publish(topic: string, data: string): Promise<void>;
  /** Makes publishing to a topic fail (deletes its stream). */
  breakDeadLetters(topic: string): Promise<void>;
  /** Closers, run last first by the profile (which closes the view itself). */
  readonly closers: ReadonlyArray<() => Promise<void>>;
}

/** Every topic the apps use and its dead-letter twin. */
const allTopics = (): string[] => Object.values(topics).flatMap((topic) => [topic, `${topic}-deadletter`]);

/** PostgreSQL v2 state (components/nats) in a database of the run's own. */
async function postgresState(closers: Array<() => Promise<void>>): Promise<string> {
  const database = await createTestDatabase();
  closers.push(() => database.drop());
  const url = new URL(database.url);
  const password = url.password === "" ? "" : ` password=${decodeURIComponent(url.password)}`;
  return `host=${url.hostname} port=${url.port || "5432"} user=${decodeURIComponent(url.username || "postgres")}${password} database=${url.pathname.slice(1)} connect_timeout=10`;
}

/**
 * components/nats on the machine's NATS (127.0.0.1:4222): one stream per topic named for this
 * run (created here as components/README.md asks an operator to; deleted after, consumers and
 * messages with it). The `{appID}` durable consumers live in those streams, so they are the run's
 * own too. Timing changed from the shipped file: ackWait 15 s instead of 5 min, which is how long
 * a message a stopped sidecar held waits for the next one (the restart scenario).
 */
export async function openNatsBroker(): Promise<BrokerSetup> {
  const closers: Array<() => Promise<void>> = [];
  try {
    const streams = await createNatsStreams({ topics: allTopics() });
    closers.push(() => streams.delete());
    const state = await postgresState(closers);
    const view = await natsView({ url: streams.url, topics: allTopics() });
    return {
      overrides: {
        "matoolkit-pubsub": { natsURL: streams.url, ackWait: "15s" },
        "matoolkit-state": { connectionString: state },
      },
      view,
      publish: (topic, data) => streams.publish(topic, data),
      breakDeadLetters: (topic) => streams.deleteStream(topic),
      closers,
    };
  } catch (error) {
    for (const closer of closers.reverse()) await closer().catch(() => undefined);
    throw error;
  }
}
