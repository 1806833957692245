import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  openMqttRun,
  requireRuntimeBinaries,
  startDaprd,
  type Daprd,
  type MqttRun,
} from "@matoolkit/dapr-harness";

const topic = "orchestrator-events";

/**
 * Why components/mqtt is refused (components/mqtt/REFUSED.md), shown on REAL daprd
 * (MATOOLKIT_DAPR_VERSION) and the machine's Mosquitto: pubsub.mqtt3 as the refused profile
 * configured it (QoS 1, persistent session keyed by its consumerID) never delivers what the
 * session held while the sidecar was away, though the broker still holds it. If this test
 * fails, the component may have been fixed: run the shared suite on it and reconsider.
 */
describe("components/mqtt stays refused: pubsub.mqtt3 on real daprd", () => {
  let run: MqttRun;
  let daprd: Daprd;
  let app: Server;
  let dir: string;
  const delivered: string[] = [];

  beforeAll(async () => {
    const binaries = requireRuntimeBinaries(process.env.MATOOLKIT_DAPR_VERSION ?? "newest", process.env);
    dir = mkdtempSync(join(tmpdir(), "matoolkit-mqtt-refused-"));
    run = await openMqttRun({ topics: [topic] });
    const resources = join(dir, "resources");
    mkdirSync(resources);
    // What components/mqtt/pubsub.yaml held before it was refused, pointed at this run's session.
    writeFileSync(
      join(resources, "pubsub.yaml"),
      `apiVersion: dapr.io/v1alpha1
kind: Component
metadata:
  name: matoolkit-pubsub
spec:
  type: pubsub.mqtt3
  version: v1
  metadata:
    - name: url
      value: "${run.url.replace(/^mqtt:/, "tcp:")}"
    - name: consumerID
      value: "${run.clientId}"
    - name: qos
      value: "1"
    - name: cleanSession
      value: "false"
    - name: retain
      value: "false"
`,
    );
    const appPort = await freePort();
    app = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      request.on("end", () => {
        response.setHeader("content-type", "application/json");
        if (request.url === "/dapr/subscribe") {
          response.end(JSON.stringify([{ pubsubname: "matoolkit-pubsub", topic, route: "/deliver" }]));
          return;
        }
        delivered.push((JSON.parse(body || "{}") as { id?: string }).id ?? "");
        response.end(JSON.stringify({ status: "SUCCESS" }));
      });
    });
    await new Promise<void>((listening) => app.listen(appPort, "127.0.0.1", listening));
    daprd = await startDaprd({
      binaries,
      appId: "matoolkit-mqtt",
      appPort,
      resourcesPaths: [resources],
      logDir: dir,
    });
  }, 120_000);

  afterAll(async () => {
    await daprd?.stop();
    app?.closeAllConnections();
    await new Promise((closed) => app?.close(closed));
    await run?.release();
    if (process.env.MATOOLKIT_DAPR_KEEP_DIRS === "1") console.warn(`daprd files kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  });

  const cloudEvent = (id: string) =>
    JSON.stringify({
      specversion: "1.0",
      id,
      source: "probe",
      type: "probe",
      datacontenttype: "application/json",
      data: {},
    });

  async function deliveredWithin(ms: number, ids: readonly string[]): Promise<string[]> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline && !ids.every((id) => delivered.includes(id)))
      await new Promise((wait) => setTimeout(wait, 100));
    return ids.filter((id) => delivered.includes(id));
  }

  it("a restarted sidecar never delivers what its session held, though the broker holds it for that session", async () => {
    // The subscription works while the sidecar runs: the broker's copy reaches the app.
    const live = `live-${randomUUID()}`;
    await run.publish(topic, cloudEvent(live));
    expect(await deliveredWithin(15_000, [live])).toEqual([live]);

    // Published while the sidecar is away: the persistent session queues them (QoS 1).
    await daprd.stop();
    const offline = Array.from({ length: 5 }, (_, index) => `offline-${index}-${randomUUID()}`);
    for (const id of offline) await run.publish(topic, cloudEvent(id));
    await daprd.restart("stop");
    // Mosquitto sends them right after CONNACK, before daprd subscribes the app's topic; paho has
    // no handler yet and neither delivers nor acknowledges them (paho.mqtt.golang router.go).
    expect(await deliveredWithin(20_000, offline)).toEqual([]);
    // Meanwhile the subscription itself is live again.
    const after = `after-${randomUUID()}`;
    await run.publish(topic, cloudEvent(after));
    expect(await deliveredWithin(15_000, [after])).toEqual([after]);

    // Stranded, not gone: the broker still holds them in flight for the sidecar's session.
    await daprd.stop();
    const held = (await run.heldForSession(2_000)).map((text) => (JSON.parse(text) as { id: string }).id);
    expect(held).toEqual(expect.arrayContaining(offline));
  }, 90_000);
});
