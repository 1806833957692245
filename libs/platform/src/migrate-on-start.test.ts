import { reasonCodes } from "@matoolkit/domain";
import { migrations, schemaStatus } from "@matoolkit/db";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { Migrator } from "kysely";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootPlatform } from "./boot-platform.ts";
import { platformConfigFromEnv } from "./platform-config.ts";

const server = { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test" };

describe("MATOOLKIT_MIGRATE_ON_START", () => {
  it("defaults to migrating the embedded database and to checking a shared server", () => {
    expect(platformConfigFromEnv({}).migrateOnStart).toBe(true);
    expect(platformConfigFromEnv(server).migrateOnStart).toBe(false);
    // all-in-one passes its own default: one process, no separate deploy step.
    expect(platformConfigFromEnv(server, { migrateOnStartDefault: true }).migrateOnStart).toBe(true);
  });

  it("is a boolean the variable sets either way, named when it is not one", () => {
    expect(platformConfigFromEnv({ ...server, MATOOLKIT_MIGRATE_ON_START: "true" }).migrateOnStart).toBe(
      true,
    );
    expect(platformConfigFromEnv({ MATOOLKIT_MIGRATE_ON_START: "false" }).migrateOnStart).toBe(false);
    // The variable wins over the entry point's default.
    expect(
      platformConfigFromEnv({ ...server, MATOOLKIT_MIGRATE_ON_START: "0" }, { migrateOnStartDefault: true })
        .migrateOnStart,
    ).toBe(false);
    expect(() => platformConfigFromEnv({ MATOOLKIT_MIGRATE_ON_START: "sometimes" })).toThrow(
      /MATOOLKIT_MIGRATE_ON_START/,
    );
  });
});

describe("DATABASE_URL with the Dapr adapters", () => {
  it("is required of a process with SQL tables, not of one without (the worker)", () => {
    expect(() => platformConfigFromEnv({ MATOOLKIT_RUNTIME: "dapr" })).toThrow(/DATABASE_URL/);
    expect(platformConfigFromEnv({ MATOOLKIT_RUNTIME: "aca" }, { usesSql: false }).usesSql).toBe(false);
    // …unless an embedded adapter would keep its state in PostgreSQL beside the Dapr ones.
    expect(() =>
      platformConfigFromEnv(
        { MATOOLKIT_RUNTIME: "aca", MATOOLKIT_IDEMPOTENCY: "embedded" },
        { usesSql: false },
      ),
    ).toThrow(/DATABASE_URL/);
  });
});

describe("boot against a schema behind this release", () => {
  let database: TestDatabase;
  let dataDir: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), "matoolkit-migrate-on-start-"));
    const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateDown()).error).toBeUndefined();
  });
  afterAll(async () => {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const env = () => ({ DATABASE_URL: database.url, MATOOLKIT_DATA_DIR: dataDir, LOG_LEVEL: "silent" });
  const last = Object.keys(migrations).sort().at(-1);

  it("refuses to start a single service (the default), naming the pending migration and the fix", async () => {
    const refused = await bootPlatform(platformConfigFromEnv(env()), "svc").catch((error: unknown) => error);
    expect(refused).toMatchObject({ reason: reasonCodes.databaseSchemaOutdated, pending: [last] });
    expect((refused as Error).message).toMatch(/matoolkit migrate/);
    // Nothing was changed: the check is a read.
    expect((await schemaStatus(database.db)).pending).toEqual([last]);
  });

  it("migrates and starts with MATOOLKIT_MIGRATE_ON_START=true", async () => {
    const platform = await bootPlatform(
      platformConfigFromEnv({ ...env(), MATOOLKIT_MIGRATE_ON_START: "true" }),
      "svc",
    );
    try {
      expect(platform.databaseKind).toBe("server");
      expect((await schemaStatus(database.db)).pending).toEqual([]);
    } finally {
      await platform.stop();
    }
  });
});
