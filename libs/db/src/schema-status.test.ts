import { reasonCodes } from "@matoolkit/domain";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { Migrator } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "./migrations/index.ts";
import { assertSchemaCurrent, migrateSchema, schemaStatus, SchemaOutdatedError } from "./schema-status.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

const known = Object.keys(migrations).sort();

describe("schemaStatus / assertSchemaCurrent / migrateSchema", () => {
  it("reads a migrated database as current", async () => {
    expect(await schemaStatus(database.db)).toEqual({ applied: known, pending: [] });
    await expect(assertSchemaCurrent(database.db)).resolves.toBeUndefined();
  });

  it("names the pending migrations of a schema behind, and migrateSchema applies exactly those", async () => {
    const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
    // Two real steps back (each migration's down), as a database of the previous release would be.
    for (let step = 0; step < 2; step += 1) expect((await migrator.migrateDown()).error).toBeUndefined();
    const behind = known.slice(-2);
    expect(await schemaStatus(database.db)).toEqual({ applied: known.slice(0, -2), pending: behind });

    const refused = await assertSchemaCurrent(database.db).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SchemaOutdatedError);
    expect(refused).toMatchObject({
      reason: reasonCodes.databaseSchemaOutdated,
      pending: behind,
      retriable: false,
    });
    expect((refused as Error).message).toContain("matoolkit migrate");
    for (const name of behind) expect((refused as Error).message).toContain(name);

    expect(await migrateSchema(database.db)).toEqual({ applied: behind });
    expect(await migrateSchema(database.db)).toEqual({ applied: [] });
    await expect(assertSchemaCurrent(database.db)).resolves.toBeUndefined();
  });
});
