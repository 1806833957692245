import { freePort } from "@matoolkit/dapr-harness/free-port";
import { topics } from "@matoolkit/domain";
import {
  createStandInBroker,
  startStandInSidecar,
  type StandInBroker,
  type StandInBrokerOptions,
} from "@matoolkit/dapr-stand-in";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll } from "vitest";
import { describeIdempotencyStoreContract } from "../../test/contract/idempotency-store.contract.ts";
import { describeMessageBusContract } from "../../test/contract/message-bus.contract.ts";
import { createLogger } from "../logger.ts";
import { createDaprRuntime, type DaprTimersKind } from "./create-dapr-runtime.ts";

/**
 * The same contract suites as the embedded adapters, run through the Dapr adapters against the
 * stand-in sidecar (libs/dapr-stand-in), which speaks Dapr's documented HTTP API. Every bus
 * instance is another replica of one app id (another process with its own sidecar) on one broker.
 */
let database: TestDatabase;
const brokers: StandInBroker[] = [];
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  for (const broker of brokers) broker.close();
  await database?.drop();
});

/**
 * A fresh broker for each contract case (a case opens its instances, then cleans them all up):
 * the catch-all routes make an unfiltered subscription receive whatever its topic still holds,
 * so a message left over from an earlier case must not reach a later one. The contract's
 * subscriptions come after the sidecars read /dapr/subscribe, so some deliveries reach a replica
 * without that subscription and are answered RETRY: allow many quick redeliveries.
 */
function brokerPerCase(options: StandInBrokerOptions = {}): { acquire(): StandInBroker; release(): void } {
  let current: { broker: StandInBroker; live: number } | undefined;
  return {
    acquire() {
      if (current === undefined || current.live === 0) {
        const broker = createStandInBroker({ maxDeliveryAttempts: 400, redeliveryDelayMs: 20, ...options });
        brokers.push(broker);
        current = { broker, live: 0 };
      }
      current.live += 1;
      return current.broker;
    },
    release() {
      if (current !== undefined) current.live -= 1;
    },
  };
}

const logger = createLogger({ level: "silent", name: "dapr-contract" });

async function openReplica(broker: StandInBroker, appId: string, timers: DaprTimersKind) {
  const appPort = await freePort();
  const sidecar = await startStandInSidecar({
    broker,
    appId,
    appUrl: `http://127.0.0.1:${appPort}`,
    log: () => undefined,
  });
  const runtime = await createDaprRuntime({
    sidecar: { httpEndpoint: sidecar.url },
    app: { host: "127.0.0.1", port: appPort },
    pubsubName: "matoolkit-pubsub",
    stateStoreName: "matoolkit-state",
    jobsApiVersion: "v1.0-alpha1",
    db: database.db,
    logger,
    dedupeWindowSeconds: 600,
    ports: { bus: true, timers, idempotency: true },
    catchAllTopics: Object.values(topics),
  });
  await runtime.start();
  await sidecar.ready();
  await runtime.sidecarReady;
  return {
    runtime,
    cleanup: async () => {
      await runtime.stop();
      await sidecar.stop();
    },
  };
}

for (const timers of ["dapr-jobs", "dapr-delayed-messages"] as const) {
  const brokers = brokerPerCase();
  describeMessageBusContract(`Dapr pub/sub via the stand-in sidecar, ${timers} timers`, async () => {
    const replica = await openReplica(brokers.acquire(), `contract-${timers}`, timers);
    const bus = replica.runtime.bus!;
    return {
      bus,
      cleanup: async () => {
        await replica.cleanup();
        brokers.release();
      },
    };
  });
}

// DynamoDB keeps an expired item, refusing first writes on it, until its sweep (issue 14, finding 2).
for (const stateStoreKind of ["redis", "dynamodb"] as const) {
  describeIdempotencyStoreContract(
    `Dapr state store via the stand-in sidecar (${stateStoreKind})`,
    async () => {
      const broker = brokerPerCase({ stateStoreKind }).acquire();
      const replica = await openReplica(broker, "contract-idempotency", "dapr-jobs");
      return { store: replica.runtime.idempotency!, cleanup: replica.cleanup };
    },
  );
}
