import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AWS_PROFILE_REGION,
  AWS_PROFILE_TABLE,
  awsRequest,
  freePort,
  renderDaprConfiguration,
  renderDaprResources,
  repoRoot,
  requireRuntimeBinaries,
  snsSqsView,
  startAwsEmulators,
  startDaprControlPlane,
  startDaprd,
  type AwsEmulators,
  type BrokerView,
} from "@matoolkit/dapr-harness";
import { topics } from "@matoolkit/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import { createDaprAppServer } from "./dapr-app-server.ts";
import { createDaprHttp, type DaprHttp } from "./dapr-http.ts";
import { createDaprMessageBus } from "./dapr-message-bus.ts";
import { createDaprStateStore } from "./dapr-state-store.ts";
import { createDeliveryLedger } from "./delivery-ledger.ts";

/**
 * components/aws (SNS/SQS pub/sub, DynamoDB state) as shipped, loaded by REAL daprd
 * (MATOOLKIT_DAPR_VERSION, default the newest pinned) against emulators: goaws v0.4.5 (SNS + SQS,
 * built by `npm run dapr:install`) and dynalite (DynamoDB), changed only as startAwsEmulators
 * says (endpoint, accountID; dummy keys in the sidecar's environment).
 * What runs here: publishing through SNS and the state the adapters keep in DynamoDB (first-write
 * claims, ETags, logical expiry, DynamoDB's TTL). What cannot, and why (docs/dapr-mode.md):
 * consuming (goaws serves only the SQS Query protocol; daprd's SQS client speaks AWS JSON 1.0)
 * and Dapr Workflow state (dynalite has no TransactWriteItems).
 */
const version = process.env.MATOOLKIT_DAPR_VERSION ?? "newest";
const logger = createLogger({ level: "silent", name: "dapr-aws-test" });
const closers: Array<() => Promise<void>> = [];
let emulators: AwsEmulators;
let http: DaprHttp;
let sidecarUrl: string;

beforeAll(async () => {
  const binaries = requireRuntimeBinaries(version, process.env);
  const dir = mkdtempSync(join(tmpdir(), `matoolkit-aws-${binaries.version}-`));
  closers.push(async () => rmSync(dir, { recursive: true, force: true }));
  emulators = await startAwsEmulators({ dataDir: join(dir, "emulators"), processEnv: process.env });
  closers.push(() => emulators.stop());
  const controlPlane = await startDaprControlPlane({ binaries, dataDir: join(dir, "control-plane") });
  closers.push(() => controlPlane.stop());
  renderDaprResources({
    sourceDirs: [join(repoRoot, "components", "aws"), join(repoRoot, "dapr", "resources")],
    targetDir: join(dir, "resources"),
    overrides: emulators.overrides,
  });
  const daprd = await startDaprd({
    binaries,
    // An app id components/aws is scoped to: another would load neither component.
    appId: "matoolkit-worker",
    appPort: await freePort(),
    resourcesPaths: [join(dir, "resources")],
    configFile: renderDaprConfiguration({
      source: join(repoRoot, "dapr", "config.yaml"),
      targetDir: join(dir, "config"),
    }),
    placementAddress: controlPlane.placementAddress,
    schedulerAddress: controlPlane.schedulerAddress,
    logDir: dir,
    env: emulators.sidecarEnv,
  });
  closers.push(() => daprd.stop());
  sidecarUrl = daprd.httpEndpoint;
  http = createDaprHttp({ httpEndpoint: sidecarUrl });
}, 180_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

const store = (options?: Parameters<typeof createDaprStateStore>[2]) =>
  createDaprStateStore(http, "matoolkit-state", { logger, ...options });
const unique = (name: string) => `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`components/aws on real daprd ${version} (goaws, dynalite)`, { timeout: 120_000 }, () => {
  it("loads both shipped components: SNS/SQS pub/sub and the DynamoDB actor state store", async () => {
    const metadata = (await (await fetch(`${sidecarUrl}/v1.0/metadata`)).json()) as {
      components: Array<{ name: string; type: string }>;
    };
    expect(metadata.components).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "matoolkit-pubsub", type: "pubsub.aws.snssqs" }),
        expect.objectContaining({ name: "matoolkit-state", type: "state.aws.dynamodb" }),
      ]),
    );
  });

  it("publishes through SNS, each message as a CloudEvent with its id; the delivery ledger in DynamoDB runs a re-published copy's handler no more", async () => {
    const view: BrokerView = await snsSqsView({
      endpoint: emulators.goaws.endpoint,
      region: AWS_PROFILE_REGION,
      topics: [topics.workerJobs],
    });
    const ledger = createDeliveryLedger({ state: store(), rememberSeconds: 600, leaseSeconds: 60 });
    const bus = await createDaprMessageBus({
      http,
      app: createDaprAppServer({ host: "127.0.0.1", port: await freePort(), logger }),
      pubsubName: "matoolkit-pubsub",
      ledger,
      deliverLater: () => Promise.reject(new Error("no delayed delivery in this test")),
      logger,
    });
    const ids = [unique("job-a"), unique("job-b"), unique("job-c")];
    const message = (id: string) => ({
      id,
      topic: topics.workerJobs,
      properties: { MessageType: "worker-job" },
      body: { JobId: id },
    });
    await bus.publish(message(ids[0]!));
    await bus.publishMany([message(ids[1]!), message(ids[2]!)]);
    // A relay publishing again after a crash: the copy goes to the broker.
    await bus.publish(message(ids[0]!));

    let copies: Awaited<ReturnType<BrokerView["messages"]>> = [];
    const deadline = Date.now() + 20_000;
    while (copies.length < ids.length + 1 && Date.now() < deadline) {
      copies = await view.messages(topics.workerJobs);
      await sleep(200);
    }
    expect(copies.map((copy) => copy.cloudEvent.id).sort()).toEqual([...ids, ids[0]!].sort());
    expect(copies.find((copy) => copy.cloudEvent.id === ids[0])?.cloudEvent).toMatchObject({
      data: { JobId: ids[0] },
      topic: topics.workerJobs,
    });
    // Each copy's delivery asks the ledger first (keyed by topic, subscription and CloudEvent id,
    // dapr-message-bus.ts): the first runs the handler, the copy is a duplicate.
    const key = `delivery|${topics.workerJobs}|worker-w1|${ids[0]!}`;
    expect(await ledger.begin(key)).toEqual({ kind: "run", attempt: 1 });
    await ledger.succeeded(key, 1);
    expect(await ledger.begin(key)).toEqual({ kind: "duplicate" });
  });

  it("claims a key once: of concurrent first-writes one wins, a stale ETag loses, the current one wins", async () => {
    const key = unique("worker-job");
    const [a, b, c] = [store(), store(), store()];
    const outcomes = await Promise.all([
      a.create(key, { holder: "a" }, 600),
      b.create(key, { holder: "b" }, 600),
      c.create(key, { holder: "c" }, 600),
    ]);
    expect(outcomes.filter((won) => won)).toHaveLength(1);
    const winner = ["a", "b", "c"][outcomes.indexOf(true)];
    const first = await a.get<{ holder: string }>(key);
    expect(first?.value).toEqual({ holder: winner });

    expect(await a.replace(key, { holder: "next" }, first!.etag, 600)).toBe(true);
    // The ETag read before that replace is stale now: DynamoDB's conditional put refuses it.
    expect(await b.replace(key, { holder: "stale" }, first!.etag, 600)).toBe(false);
    const current = await b.get<{ holder: string }>(key);
    expect(current?.value).toEqual({ holder: "next" });
    expect(await b.delete(key, first!.etag)).toBe(false);
    expect(await b.delete(key, current!.etag)).toBe(true);
    expect(await b.get(key)).toBeUndefined();
  });

  it("takes over a logically expired key (still stored with its ETag) and refuses a live one", async () => {
    const live = unique("lease-live");
    const expiring = unique("lease-expiring");
    const s = store();
    expect(await s.create(live, { holder: "first" }, 60)).toBe(true);
    expect(await s.create(expiring, { holder: "dead" }, 1)).toBe(true);
    await sleep(1_500);
    expect(await s.create(live, { holder: "second" }, 60)).toBe(false);
    expect((await s.get(live))?.value).toEqual({ holder: "first" });
    expect(await s.get(expiring)).toBeUndefined();
    const outcomes = await Promise.all([
      store().create(expiring, { holder: "x" }, 60),
      store().create(expiring, { holder: "y" }, 60),
    ]);
    expect(outcomes.filter((won) => won)).toHaveLength(1);
    expect((await s.get(expiring))?.value).toEqual({ holder: outcomes[0] ? "x" : "y" });
  });

  it("past DynamoDB's TTL the item is hidden yet still refuses a first-write until the sweep: reported lost and warned once", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const warnings = createLogger({
      level: "warn",
      name: "dapr-aws-test",
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const key = unique("timer|poll|lease");
    const s = store({ logger: warnings, physicalGraceSeconds: 0 });
    expect(await s.create(key, { since: "then" }, 1)).toBe(true);
    // Dapr's ttlInSeconds is a whole number of seconds, stored as the item's expiresAt (epoch s).
    await sleep(2_500);
    const raw = await fetch(`${sidecarUrl}/v1.0/state/matoolkit-state/${encodeURIComponent(key)}`);
    expect(raw.status).toBe(204);

    expect(await s.create(key, { since: "now" }, 60)).toBe(false);
    expect(await s.create(key, { since: "now" }, 60)).toBe(false);
    expect(lines.filter((line) => line.reason === "state.key_blocked")).toEqual([
      expect.objectContaining({ key, level: 40 }),
    ]);

    // DynamoDB's background TTL sweep (within days on AWS; dynalite has none) removes the item.
    const swept = await awsRequest({
      endpoint: emulators.dynalite.endpoint,
      region: AWS_PROFILE_REGION,
      service: "dynamodb",
      protocol: { json: "DynamoDB_20120810.DeleteItem" },
      // Dapr stores a key as `<app id>||<key>` (the default key prefix).
      params: { TableName: AWS_PROFILE_TABLE, Key: { key: { S: `matoolkit-worker||${key}` } } },
    });
    expect(swept.status).toBe(200);
    expect(await s.create(key, { since: "later" }, 60)).toBe(true);
  });
});
