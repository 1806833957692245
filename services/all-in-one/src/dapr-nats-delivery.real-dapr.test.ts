import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  renderDaprResources,
  requireRuntimeBinaries,
  startDaprd,
  type Daprd,
} from "@matoolkit/dapr-harness";
import { openNatsBroker, type BrokerSetup } from "../test/real-broker-setup.ts";

const repoRoot = resolve(import.meta.dirname, "../../..");
const topic = "orchestrator-events";
const deadLetters = `${topic}-deadletter`;

/** Polls until `done`, or fails after `timeoutMs` naming what it waited for. */
async function within<T>(timeoutMs: number, read: () => T, done: (value: T) => boolean, what: string) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((wait) => setTimeout(wait, 100));
  }
}

/**
 * What components/nats gives a subscriber on REAL daprd (MATOOLKIT_DAPR_VERSION), one guarantee
 * at a time: a delivery that fails and then succeeds, one that keeps failing (dead-lettered), one
 * whose dead-letter forward fails too, a sidecar killed while its app holds a delivery, and
 * messages published while no sidecar runs. The shipped pubsub file (ackWait 15 s, as in the
 * shared suite) with a short inbound retry policy of the test's own (3 attempts, 200 ms apart)
 * instead of dapr/resources' 3-minute window; dapr-nats.real-dapr.test.ts runs the shipped one.
 */
describe("components/nats on real daprd: redelivery and dead letters", () => {
  const profile = "nats";
  let broker: BrokerSetup;
  let daprd: Daprd;
  let app: Server;
  let dir: string;
  /** Per message id: how the app answers each delivery, and how many it saw. */
  const plans = new Map<string, (attempt: number) => "ok" | "fail" | "hang">();
  const attempts = new Map<string, number>();
  const deadLettered: string[] = [];

  beforeAll(async () => {
    const version = process.env.MATOOLKIT_DAPR_VERSION ?? "newest";
    const binaries = requireRuntimeBinaries(version, process.env);
    dir = mkdtempSync(join(tmpdir(), `matoolkit-redelivery-${profile}-`));
    broker = await openNatsBroker();
    const resources = join(dir, "resources");
    renderDaprResources({
      sourceDirs: [join(repoRoot, "components", profile)],
      targetDir: resources,
      overrides: broker.overrides,
    });
    writeFileSync(
      join(resources, "resiliency.yaml"),
      `apiVersion: dapr.io/v1alpha1
kind: Resiliency
metadata:
  name: probe
spec:
  policies:
    retries:
      delivery:
        policy: constant
        duration: 200ms
        maxRetries: 2
  targets:
    components:
      matoolkit-pubsub:
        inbound:
          retry: delivery
`,
    );
    const appPort = await freePort();
    app = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      request.on("end", () => {
        if (request.url === "/dapr/subscribe") {
          response.setHeader("content-type", "application/json");
          response.end(
            JSON.stringify([
              { pubsubname: "matoolkit-pubsub", topic, route: "/deliver", deadLetterTopic: deadLetters },
              { pubsubname: "matoolkit-pubsub", topic: deadLetters, route: "/dead" },
            ]),
          );
          return;
        }
        const id = (JSON.parse(body || "{}") as { id?: string }).id ?? "";
        if (request.url === "/dead") {
          deadLettered.push(id);
          response.end(JSON.stringify({ status: "SUCCESS" }));
          return;
        }
        const attempt = (attempts.get(id) ?? 0) + 1;
        attempts.set(id, attempt);
        const answer = plans.get(id)?.(attempt) ?? "ok";
        if (answer === "hang") return; // never answers: the sidecar holds the message
        response.statusCode = answer === "ok" ? 200 : 500;
        response.end(JSON.stringify({ status: answer === "ok" ? "SUCCESS" : "RETRY" }));
      });
    });
    await new Promise<void>((listening) => app.listen(appPort, "127.0.0.1", listening));
    daprd = await startDaprd({
      binaries,
      appId: "matoolkit-probe",
      ...(process.env.MATOOLKIT_DAPR_LOG_LEVEL === "debug" ? { logLevel: "debug" as const } : {}),
      appPort,
      resourcesPaths: [resources],
      logDir: dir,
    });
  }, 120_000);

  afterAll(async () => {
    await daprd?.stop();
    app?.closeAllConnections();
    await new Promise((closed) => app?.close(closed));
    for (const closer of [...(broker?.closers ?? [])].reverse()) await closer().catch(() => undefined);
    await broker?.view.close();
    if (process.env.MATOOLKIT_DAPR_KEEP_DIRS === "1") console.warn(`daprd files kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  });

  /** Publishes through the sidecar, as the app would. */
  async function publish(id: string): Promise<void> {
    const response = await fetch(`${daprd.httpEndpoint}/v1.0/publish/matoolkit-pubsub/${topic}`, {
      method: "POST",
      headers: { "content-type": "application/cloudevents+json" },
      body: JSON.stringify({
        specversion: "1.0",
        id,
        source: "probe",
        type: "probe",
        datacontenttype: "application/json",
        data: { id },
      }),
    });
    expect(response.status).toBe(204);
  }

  /** The app's delivery body is the CloudEvent; its data carries the id. */
  const cloudEvent = (id: string) =>
    JSON.stringify({
      specversion: "1.0",
      id,
      source: "probe",
      type: "probe",
      datacontenttype: "application/json",
      data: { id },
    });

  it("delivers again a message whose handler fails twice, then stops once it succeeds", async () => {
    const id = `fail-twice-${randomUUID()}`;
    plans.set(id, (attempt) => (attempt <= 2 ? "fail" : "ok"));
    await publish(id);
    await within(
      20_000,
      () => attempts.get(id) ?? 0,
      (count) => count >= 3,
      "the third delivery",
    );
    // Acknowledged after the success: nothing more arrives (JetStream would hand it out again
    // after ackWait, 15 s here).
    await new Promise((wait) => setTimeout(wait, 18_000));
    expect(attempts.get(id)).toBe(3);
    expect(deadLettered).not.toContain(id);
  }, 60_000);

  it("forwards a message that keeps failing to <topic>-deadletter, once", async () => {
    const id = `fail-always-${randomUUID()}`;
    plans.set(id, () => "fail");
    await publish(id);
    await within(
      20_000,
      () => deadLettered,
      (ids) => ids.includes(id),
      "the dead letter at the app",
    );
    expect(attempts.get(id)).toBe(3);
    const copies = await broker.view.messages(deadLetters);
    expect(copies.filter((copy) => copy.cloudEvent.id === id)).toHaveLength(1);
  }, 60_000);

  it("hands a message a killed sidecar held unacknowledged to the next sidecar", async () => {
    const id = `held-${randomUUID()}`;
    plans.set(id, (attempt) => (attempt === 1 ? "hang" : "ok"));
    await publish(id);
    await within(
      20_000,
      () => attempts.get(id) ?? 0,
      (count) => count >= 1,
      "the first delivery",
    );
    await daprd.restart("kill");
    await within(
      45_000,
      () => attempts.get(id) ?? 0,
      (count) => count >= 2,
      "the delivery again through the new sidecar",
    );
  }, 90_000);

  it("delivers again a message whose dead-letter forward failed", async () => {
    // Publishing to the dead-letter topic now fails (its stream is gone): Dapr's forward fails,
    // and the component must leave the message unacknowledged (it naks it) for a redelivery.
    await broker.breakDeadLetters(deadLetters);
    const id = `dead-letter-fails-${randomUUID()}`;
    plans.set(id, (attempt) => (attempt <= 3 ? "fail" : "ok"));
    await publish(id);
    await within(
      60_000,
      () => attempts.get(id) ?? 0,
      (count) => count >= 4,
      "the delivery after the failed forward",
    );
  }, 90_000);

  it("delivers what was published while no sidecar ran, once a sidecar starts", async () => {
    await daprd.stop();
    const ids = Array.from({ length: 5 }, (_, index) => `offline-${index}-${randomUUID()}`);
    for (const id of ids) await broker.publish(topic, cloudEvent(id));
    await daprd.restart("stop");
    await within(
      45_000,
      () => ids.filter((id) => (attempts.get(id) ?? 0) >= 1),
      (delivered) => delivered.length === ids.length,
      "every message published while the sidecar was down",
    );
  }, 90_000);
});
