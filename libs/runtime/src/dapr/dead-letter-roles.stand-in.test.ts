import { freePort } from "@matoolkit/dapr-harness/free-port";
import { randomBytes, randomUUID } from "node:crypto";
import { createDb, migrateToLatest, type Db } from "@matoolkit/db";
import { MatoolkitError, reasonCodes, topics } from "@matoolkit/domain";
import { createStandInBroker, startStandInSidecar, type StandInBroker } from "@matoolkit/dapr-stand-in";
import { withDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { createLogger } from "../logger.ts";
import { createDaprRuntime } from "./create-dapr-runtime.ts";

/**
 * Issue 28, finding 3: each service connects as a PostgreSQL role of its own (Container Apps:
 * one managed identity per service, deploy/aca/hooks/db-roles.sh; Helm with
 * `<service>.serviceAccount.clientId`), the migrate role owns the schema, and the services get
 * DML through a group role. Every service opening the Dapr bus with a database must start and
 * record its dead letters; none may run DDL (the first role to create an object would own it and
 * lock the others out).
 */
const logger = createLogger({ level: "silent", name: "dead-letter-roles-test" });
const waitUntil = (assertion: () => void | Promise<void>) =>
  vi.waitFor(assertion, { timeout: 10_000, interval: 25 });

let admin: pg.Client;
let adminUrl: string;
let database: string;
const password = randomBytes(12).toString("hex");
const role = (name: string) => `${database}_${name}`;
const openDbs: Db[] = [];
const cleanups: Array<() => Promise<void>> = [];
let broker: StandInBroker;

/** A pool logged in as one of this file's roles (a password, whatever the server's pg_hba asks). */
function connectAs(name: string): Db {
  const url = new URL(withDatabase(adminUrl, database));
  url.username = role(name);
  url.password = password;
  const db = createDb({ connectionString: url.toString(), maxConnections: 2, applicationName: name });
  openDbs.push(db);
  return db;
}

beforeAll(async () => {
  const provided = inject("testPostgres");
  adminUrl = provided.adminUrl;
  // The global setup's sweep drops databases with this prefix if the file dies before afterAll.
  database = `matoolkit_t${provided.templateDatabase.split("_").pop()}_${randomBytes(4).toString("hex")}`;
  admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE ROLE ${role("migrate")} LOGIN PASSWORD '${password}'`);
  await admin.query(`CREATE ROLE ${role("app")} NOLOGIN`);
  for (const service of ["svc_a", "svc_b", "svc_c"])
    await admin.query(`CREATE ROLE ${role(service)} LOGIN PASSWORD '${password}'`);
  await admin.query(`GRANT ${role("app")} TO ${role("svc_a")}, ${role("svc_b")}`);
  // The migrate role owns the database, hence (PostgreSQL 15+) its schema public.
  await admin.query(`CREATE DATABASE ${database} OWNER ${role("migrate")}`);

  // deploy/aca/hooks/db-roles.sh, run as the migrate role before the first migration (azd's
  // postprovision comes before postdeploy): the group's grants and the migrate role's defaults.
  const migrate = new pg.Client({
    connectionString: Object.assign(new URL(withDatabase(adminUrl, database)), {
      username: role("migrate"),
      password,
    }).toString(),
  });
  await migrate.connect();
  try {
    await migrate.query(`GRANT CONNECT, CREATE ON DATABASE ${database} TO ${role("app")}`);
    await migrate.query(`GRANT USAGE ON SCHEMA public TO ${role("app")}`);
    await migrate.query(
      `ALTER DEFAULT PRIVILEGES FOR ROLE ${role("migrate")} IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${role("app")}`,
    );
    await migrate.query(
      `ALTER DEFAULT PRIVILEGES FOR ROLE ${role("migrate")} IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO ${role("app")}`,
    );
    // svc_c: in the database, but outside the services' group (read-only on every table).
    await migrate.query(`GRANT CONNECT ON DATABASE ${database} TO ${role("svc_c")}`);
    await migrate.query(`GRANT USAGE ON SCHEMA public TO ${role("svc_c")}`);
    await migrate.query(
      `ALTER DEFAULT PRIVILEGES FOR ROLE ${role("migrate")} IN SCHEMA public GRANT SELECT ON TABLES TO ${role("svc_c")}`,
    );
  } finally {
    await migrate.end();
  }
  // `matoolkit migrate`, as the migrate role.
  await migrateToLatest(connectAs("migrate"));
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  broker?.close();
});

afterAll(async () => {
  for (const db of openDbs) await db.destroy();
  if (admin === undefined) return;
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  for (const name of ["svc_a", "svc_b", "svc_c", "app", "migrate"]) {
    // Default privileges and grants live in the dropped database; the roles own nothing else.
    await admin.query(`DROP ROLE IF EXISTS ${role(name)}`);
  }
  await admin.end();
});

/** One service: its own role's pool, its own sidecar and app id, as boot-platform opens it. */
async function openService(roleName: string, appId: string) {
  const appPort = await freePort();
  const sidecar = await startStandInSidecar({
    broker,
    appId,
    appUrl: `http://127.0.0.1:${appPort}`,
    stateStores: ["matoolkit-state"],
    log: () => undefined,
  });
  cleanups.push(() => sidecar.stop());
  const runtime = await createDaprRuntime({
    sidecar: { httpEndpoint: sidecar.url },
    app: { host: "127.0.0.1", port: appPort },
    pubsubName: "matoolkit-pubsub",
    stateStoreName: "matoolkit-state",
    jobsApiVersion: "v1.0-alpha1",
    db: connectAs(roleName),
    logger,
    dedupeWindowSeconds: 600,
    ports: { bus: true, timers: "dapr-jobs", idempotency: false },
  });
  cleanups.push(() => runtime.stop());
  return { bus: runtime.bus!, sidecar, start: () => runtime.start() };
}

async function publish(id: string, body: unknown): Promise<void> {
  const publisher = await startStandInSidecar({ broker, appId: "publisher", log: () => undefined });
  cleanups.push(() => publisher.stop());
  await publisher.ready();
  const response = await fetch(
    `${publisher.url}/v1.0/publish/matoolkit-pubsub/${topics.orchestratorEvents}?metadata.cloudevent.id=${id}`,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
  );
  expect(response.status).toBe(204);
}

const poison = async () => {
  throw new MatoolkitError(reasonCodes.messageInvalid, "no such batch", { retriable: false });
};

describe("the Dapr bus's dead-letter table with one database role per service", () => {
  it("lets two services of different roles start one after the other and each record its dead letters", async () => {
    broker = createStandInBroker({ maxDeliveryAttempts: 3, redeliveryDelayMs: 10 });
    // In sequence, as Container Apps starts them: the first used to create (and own) the table.
    const a = await openService("svc_a", "service-a");
    const b = await openService("svc_b", "service-b");
    const subscriptionA = { topic: topics.orchestratorEvents, name: "service-a" } as const;
    const subscriptionB = { topic: topics.orchestratorEvents, name: "service-b" } as const;
    await a.bus.subscribe(subscriptionA, poison);
    await b.bus.subscribe(subscriptionB, poison);
    for (const service of [a, b]) {
      await service.start();
      await service.sidecar.ready();
    }

    const id = randomUUID();
    await publish(id, { BatchId: 9 });

    // Each app got its copy (a consumer group per app id) and recorded it as its own role.
    for (const [service, subscription] of [
      [a, subscriptionA],
      [b, subscriptionB],
    ] as const) {
      await waitUntil(async () =>
        expect((await service.bus.deadLetters(subscription)).filter((letter) => letter.id === id)).toEqual([
          expect.objectContaining({ id, subscription: subscription.name, deliveryCount: 1 }),
        ]),
      );
    }
    // One table for both, read by either role.
    expect((await a.bus.deadLetters(subscriptionB)).map((letter) => letter.id)).toContain(id);

    // No service role created anything: every schema and relation is the migrate role's.
    const owned = await sql<{ name: string }>`
      SELECT nspname AS name FROM pg_namespace WHERE pg_get_userbyid(nspowner) = ANY(${[role("svc_a"), role("svc_b")]})
      UNION ALL
      SELECT relname FROM pg_class WHERE pg_get_userbyid(relowner) = ANY(${[role("svc_a"), role("svc_b")]})`.execute(
      connectAs("migrate"),
    );
    expect(owned.rows).toEqual([]);
  });

  it("refuses the start of a service whose role may not add rows, naming the missing grant", async () => {
    broker = createStandInBroker({ maxDeliveryAttempts: 3, redeliveryDelayMs: 10 });
    await expect(openService("svc_c", "service-c")).rejects.toThrow(
      `Database role ${role("svc_c")} may not record dead letters: it lacks INSERT on bus_dead_letters, USAGE on bus_dead_letters_id_seq`,
    );
  });
});
