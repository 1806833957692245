import { randomBytes } from "node:crypto";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
} from "@nats-io/jetstream";

/**
 * One JetStream stream per topic on the machine's NATS server, as components/nats needs them
 * (pubsub.jetstream creates none, and finds a topic's stream by its subject), named for this
 * run only. Subjects are global on a NATS account, so two runs cannot hold the same topic at
 * once: the second gets an error naming the stream that holds it. A stream left by a run whose
 * process is gone (killed before its clean-up) is deleted first.
 */
export interface NatsStreams {
  readonly url: string;
  /** Stream names, by topic. */
  readonly streams: ReadonlyMap<string, string>;
  /** Publishes into a topic's stream, as a Dapr sidecar would (a CloudEvent as JSON). */
  publish(topic: string, data: string): Promise<void>;
  /** Deletes one topic's stream: publishing to the topic fails from then on. */
  deleteStream(topic: string): Promise<void>;
  /** Deletes the streams (and with them their consumers and messages). */
  delete(): Promise<void>;
}

/** Stream names of the harness: `mtk-<run>-<pid>-<topic>` (the pid tells a stale run). */
const harnessStream = /^mtk-[0-9a-f]{8}-(\d+)-/;

const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

async function deleteStaleStreams(jsm: JetStreamManager): Promise<void> {
  for await (const info of jsm.streams.list()) {
    const pid = harnessStream.exec(info.config.name)?.[1];
    if (pid !== undefined && !processAlive(Number(pid))) await jsm.streams.delete(info.config.name);
  }
}

export async function createNatsStreams(options: {
  readonly topics: readonly string[];
  readonly url?: string;
}): Promise<NatsStreams> {
  const url = options.url ?? "nats://127.0.0.1:4222";
  let nc: NatsConnection;
  try {
    nc = await connect({ servers: url });
  } catch (error) {
    throw new Error(`cannot reach NATS at ${url} (is nats-server -js running?): ${String(error)}`);
  }
  const jsm = await jetstreamManager(nc).catch(async (error: unknown) => {
    await nc.close();
    throw new Error(`NATS at ${url} has no JetStream (start nats-server with -js): ${String(error)}`);
  });
  const run = `mtk-${randomBytes(4).toString("hex")}-${process.pid}`;
  const streams = new Map<string, string>();
  const deleteAll = async () => {
    for (const name of streams.values()) await jsm.streams.delete(name).catch(() => undefined);
    await nc.close().catch(() => undefined);
  };
  try {
    await deleteStaleStreams(jsm);
    for (const topic of options.topics) {
      const name = `${run}-${topic}`;
      const holder = await jsm.streams.find(topic).catch(() => undefined);
      if (holder !== undefined) {
        throw new Error(
          `NATS stream ${holder} already holds the subject ${topic}: another run is using it (or delete it with jsm / nats stream rm)`,
        );
      }
      // What components/README.md asks an operator to create, with spec 000's topic settings:
      // kept 7 days, 1024 MB at most, duplicates (by Nats-Msg-Id, the CloudEvent id) dropped
      // within 10 minutes. Limits retention: acknowledged messages stay until they age out, and
      // each durable consumer keeps its own position.
      await jsm.streams.add({
        name,
        subjects: [topic],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        max_age: 7 * 24 * 3600 * 1e9,
        max_bytes: 1024 * 1024 * 1024,
        duplicate_window: 10 * 60 * 1e9,
      });
      streams.set(topic, name);
    }
  } catch (error) {
    await deleteAll();
    throw error;
  }
  const js = jetstream(nc);
  return {
    url,
    streams,
    async publish(topic, data) {
      await js.publish(topic, data);
    },
    async deleteStream(topic) {
      const name = streams.get(topic);
      if (name !== undefined) await jsm.streams.delete(name);
    },
    delete: deleteAll,
  };
}
