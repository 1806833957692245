import { randomBytes } from "node:crypto";
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, connectAsync } from "mqtt";

/**
 * A run's share of the machine's MQTT broker (Mosquitto has no virtual hosts, and topic names are
 * the app's own): a client id of the run's own for the sidecar (components-contrib pubsub.mqtt3's
 * consumerID, the persistent session's key), and a lock so that two runs on this machine never
 * subscribe to the same topics at once (each would receive the other's messages). `release`
 * removes the persistent session and any retained message left on the topics.
 */
export interface MqttRun {
  readonly url: string;
  readonly clientId: string;
  /** Publishes at QoS 1 (not retained), as a Dapr sidecar would (a CloudEvent as JSON). */
  publish(topic: string, data: string): Promise<void>;
  /**
   * What the broker still holds for the sidecar's persistent session: connects as its client id
   * (the sidecar must be stopped) without subscribing, and collects what the broker sends within
   * `ms` (MQTT 3.1.1, 4.4: a resumed session gets its unacknowledged and queued messages). They
   * are acknowledged, so the session no longer holds them afterwards.
   */
  heldForSession(ms: number): Promise<string[]>;
  release(): Promise<void>;
}

const lockFile = join(tmpdir(), "matoolkit-mqtt-topics.lock");

function takeLock(): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(readFileSync(lockFile, "utf8"));
      let alive = false;
      try {
        process.kill(holder, 0);
        alive = true;
      } catch (killError) {
        alive = (killError as NodeJS.ErrnoException).code === "EPERM";
      }
      if (alive)
        throw new Error(`another run (process ${holder}) is using the MQTT broker's topics (${lockFile})`);
      rmSync(lockFile, { force: true });
    }
  }
  throw new Error(`cannot take ${lockFile}`);
}

export async function openMqttRun(options: {
  readonly topics: readonly string[];
  readonly url?: string;
}): Promise<MqttRun> {
  const url = options.url ?? "mqtt://127.0.0.1:1883";
  takeLock();
  const clientId = `mtk-${randomBytes(4).toString("hex")}`;
  return {
    url,
    clientId,
    async publish(topic, data) {
      const client = await connectAsync(url, { clean: true, protocolVersion: 4, reconnectPeriod: 0 });
      try {
        await client.publishAsync(topic, data, { qos: 1 });
      } finally {
        await client.endAsync();
      }
    },
    async heldForSession(ms) {
      const held: string[] = [];
      const client = connect(url, { clientId, clean: false, protocolVersion: 4, reconnectPeriod: 0 });
      client.on("message", (_topic, payload) => held.push(payload.toString("utf8")));
      await new Promise((wait) => setTimeout(wait, ms));
      await client.endAsync();
      return held;
    },
    async release() {
      try {
        // Connecting with the same client id and a clean session ends the persistent session
        // (its subscriptions and queued messages); an empty retained publish removes a retained
        // message (MQTT 3.1.1, 3.3.1.3), a no-op where there is none.
        const client = await connectAsync(url, {
          clientId,
          clean: true,
          protocolVersion: 4,
          reconnectPeriod: 0,
        });
        for (const topic of options.topics) await client.publishAsync(topic, "", { qos: 1, retain: true });
        await client.endAsync();
      } finally {
        rmSync(lockFile, { force: true });
      }
    },
  };
}
