import { randomBytes } from "node:crypto";
import { migrations, type Db } from "@matoolkit/db";
import { createLogger } from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sealWebhookSecrets } from "./seal-webhook-secrets.ts";
import { SecretKeyring, UnknownSecretKeyError, sealedKeyId, secretKeyOf } from "./secret-keyring.ts";

/**
 * Finding 8: rows written in clear before migration 0012 are sealed at start; a rotation re-seals
 * every row with the new key. Real PostgreSQL; the column is read with plain SQL.
 */
let testDb: TestDatabase;
let db: Db;
const logger = createLogger({ level: "silent", name: "test" });
const oldKey = secretKeyOf(randomBytes(32));
const newKey = secretKeyOf(randomBytes(32));

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

const storedSecrets = async () =>
  (await sql<{ id: number; secret: string }>`SELECT id, secret FROM webhooks ORDER BY id`.execute(db)).rows;

describe("sealWebhookSecrets", () => {
  it("seals a clear secret written before migration 0012, then re-seals every row on rotation", async () => {
    const migration = migrations["0012_webhook_tombstones_sealed_secrets"]!;
    await migration.down!(db as unknown as Kysely<unknown>);
    // As the code before 0012 stored it.
    const clear = randomBytes(32).toString("base64url");
    await sql`INSERT INTO webhooks (url, events, secret) VALUES ('https://hooks.example.test/a', '{batch.completed}', ${clear})`.execute(
      db,
    );
    await migration.up(db as unknown as Kysely<unknown>);
    expect((await storedSecrets())[0]!.secret).toBe(clear);

    const first = new SecretKeyring(oldKey);
    expect(await sealWebhookSecrets(db, first, logger)).toEqual({
      sealedClear: 1,
      resealed: 0,
      unknownKey: 0,
    });
    const [sealed] = await storedSecrets();
    expect(sealed!.secret).not.toContain(clear);
    expect(sealedKeyId(sealed!.secret)).toBe(oldKey.id);
    expect(first.open(sealed!.secret)).toBe(clear);
    // Idempotent: a second start changes nothing.
    expect(await sealWebhookSecrets(db, first, logger)).toEqual({
      sealedClear: 0,
      resealed: 0,
      unknownKey: 0,
    });

    // Rotation: the new key first, the old one still known; every row ends under the new key.
    const rotated = new SecretKeyring(newKey, [oldKey]);
    expect(await sealWebhookSecrets(db, rotated, logger)).toEqual({
      sealedClear: 0,
      resealed: 1,
      unknownKey: 0,
    });
    const [resealed] = await storedSecrets();
    expect(sealedKeyId(resealed!.secret)).toBe(newKey.id);
    expect(new SecretKeyring(newKey).open(resealed!.secret)).toBe(clear);
    // The old key alone can no longer read it: it can be dropped.
    expect(() => first.open(resealed!.secret)).toThrow(UnknownSecretKeyError);
  });

  it("leaves a row of an unknown key as it is and counts it", async () => {
    const foreign = new SecretKeyring(secretKeyOf(randomBytes(32))).seal("x");
    await sql`INSERT INTO webhooks (url, events, secret) VALUES ('https://hooks.example.test/b', '{batch.failed}', ${foreign})`.execute(
      db,
    );
    const report = await sealWebhookSecrets(db, new SecretKeyring(newKey), logger);
    expect(report.unknownKey).toBe(1);
    expect((await storedSecrets()).map((row) => row.secret)).toContain(foreign);
  });
});
