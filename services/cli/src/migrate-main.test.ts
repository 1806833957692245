import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { migrations, schemaStatus } from "@matoolkit/db";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { Migrator } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** `matoolkit migrate`: the deploy's migration step, as the image's `migrate` command runs it. */
const repo = fileURLToPath(new URL("../../../", import.meta.url));
const tsx = join(repo, "node_modules", ".bin", "tsx");

function migrate(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, ["services/cli/src/migrate-main.ts"], {
      cwd: repo,
      env: { PATH: process.env.PATH ?? "", ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  // A database of the previous release: its last two migrations not yet run.
  const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
  for (let step = 0; step < 2; step += 1) expect((await migrator.migrateDown()).error).toBeUndefined();
});
afterAll(async () => {
  await database?.drop();
});

const logLines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { msg?: string; applied?: string[] });

describe("migrate-main.ts", () => {
  it("applies the pending migrations, logs them, exits 0; a second run finds the schema current", async () => {
    const pending = (await schemaStatus(database.db)).pending;
    expect(pending).toHaveLength(2);

    const first = await migrate({ DATABASE_URL: database.url });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(logLines(first.stdout)).toContainEqual(
      expect.objectContaining({ msg: "applied 2 migration(s)", applied: pending }),
    );
    expect((await schemaStatus(database.db)).pending).toEqual([]);

    const second = await migrate({ DATABASE_URL: database.url });
    expect(second.code).toBe(0);
    expect(logLines(second.stdout)).toContainEqual(
      expect.objectContaining({ msg: "schema already current", applied: [] }),
    );
  });

  it("fails with a clear message and a non-zero exit without DATABASE_URL", async () => {
    const exit = await migrate({});
    expect(exit.code).toBe(1);
    expect(exit.stderr).toBe(
      "migrate: failed: DATABASE_URL is not set: migrate runs against a PostgreSQL server\n",
    );
  });

  it("fails non-zero when the server cannot be reached, without printing the URL's password", async () => {
    const exit = await migrate({ DATABASE_URL: "postgres://matoolkit:S3cret-Pw@127.0.0.1:9/matoolkit" });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/^migrate: failed: /);
    expect(exit.stderr + exit.stdout).not.toContain("S3cret-Pw");
  });
});
