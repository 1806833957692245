/**
 * deploy/aca/hooks/db-roles.sh against a real PostgreSQL, and postgres.bicep's order.
 *
 * The script runs on Azure as the migrate identity, an Entra administrator (member of
 * azure_pg_admin, not a superuser). Here a local role with an administrator's attributes stands for it,
 * and a superuser-owned database for one created before any Entra administrator existed (owned by
 * azuresu, the service's superuser: learn.microsoft.com/azure/postgresql/security/
 * security-entra-concepts). pgaadauth_create_principal_with_oid, which only Azure has, is replaced
 * by a function of the same signature that creates a login role
 * (learn.microsoft.com/azure/postgresql/security/security-manage-entra-users).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { postgresOrderProblems, type Sources } from "./testing/aca-checks.ts";

const root = join(import.meta.dirname, "..", "..");
const script = join(root, "deploy/aca/hooks/db-roles.sh");

const { adminUrl, templateDatabase } = inject("testPostgres");
const admin = new URL(adminUrl);
// The global setup's pid prefixes every database name, so its teardown sweeps what a crash left.
const setupPid = templateDatabase.split("_").pop() ?? "0";
const suffix = randomBytes(3).toString("hex");
const role = (name: string) => `dbroles_${name}_${suffix}`;
const roles = {
  migrate: role("migrate"),
  deployer: role("deployer"),
  group: role("app"),
  orchestrator: role("orchestrator"),
  scheduler: role("scheduler"),
  dapr: role("dapr"),
  keeper: role("keeper"),
};
const databases: string[] = [];
// Every role of this file logs in with it (the server may require passwords: embedded,
// testcontainers); the script gets it as PGPASSWORD, where Azure has the managed identity's token.
const password = randomBytes(12).toString("hex");

async function asAdmin<T>(database: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function asRole<T>(database: string, user: string, work: (client: pg.Client) => Promise<T>) {
  const client = new pg.Client({
    host: admin.hostname,
    port: Number(admin.port || 5432),
    database,
    user,
    password,
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A database owned by `owner`, with the stand-in of pgaadauth's function. */
async function createDatabase(owner: string): Promise<string> {
  const name = `matoolkit_t${setupPid}_dbroles_${randomBytes(3).toString("hex")}`;
  await asAdmin("postgres", (client) => client.query(`CREATE DATABASE ${name} OWNER ${owner}`));
  databases.push(name);
  await asAdmin(name, (client) =>
    client.query(`
      CREATE FUNCTION pgaadauth_create_principal_with_oid(rolename text, objectid text, objecttype text,
        isadmin boolean, ismfa boolean) RETURNS text LANGUAGE plpgsql AS $$
      BEGIN
        EXECUTE format('CREATE ROLE %I LOGIN PASSWORD %L', rolename, '${password}');
        RETURN 'Created role for ' || rolename;
      END $$`),
  );
  return name;
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function runScript(database: string, path = script): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      "sh",
      [path],
      {
        env: {
          PATH: process.env.PATH,
          PGHOST: admin.hostname,
          PGPORT: admin.port || "5432",
          PGDATABASE: database,
          PGUSER: roles.migrate,
          PGPASSWORD: password,
          PGSSLMODE: "disable",
          PGAADAUTH_DATABASE: database,
          APP_GROUP_ROLE: roles.group,
          APP_ROLES: `${roles.orchestrator}:11111111-1111-4111-8111-111111111111,${roles.scheduler}:22222222-2222-4222-8222-222222222222`,
          DAPR_STATE_ROLE: `${roles.dapr}:33333333-3333-4333-8333-333333333333`,
        },
      },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  await asAdmin("postgres", async (client) => {
    // The attributes of an Azure server administrator, which an Entra administrator shares:
    // LOGIN, NOSUPERUSER, INHERIT, CREATEDB, CREATEROLE (learn.microsoft.com/azure/postgresql/
    // security/security-entra-concepts: "the same privileges as the original PostgreSQL administrator").
    await client.query(
      `CREATE ROLE ${roles.migrate} LOGIN NOSUPERUSER INHERIT CREATEDB CREATEROLE PASSWORD '${password}'`,
    );
    // The deployer: the other Entra administrator; both are members of azure_pg_admin on Azure,
    // which lets the migrate role take over what the deployer owns ("Improved control for
    // azure_pg_admin", learn.microsoft.com/azure/postgresql/security/security-access-control).
    await client.query(`CREATE ROLE ${roles.deployer} LOGIN PASSWORD '${password}'`);
    await client.query(`GRANT ${roles.deployer} TO ${roles.migrate}`);
    await client.query(`CREATE ROLE ${roles.keeper} NOLOGIN`);
  });
});

afterAll(async () => {
  await asAdmin("postgres", async (client) => {
    for (const name of databases) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    for (const name of [
      roles.orchestrator,
      roles.scheduler,
      roles.dapr,
      roles.group,
      roles.deployer,
      roles.keeper,
      roles.migrate,
    ]) {
      await client.query(`DROP ROLE IF EXISTS ${name}`);
    }
  });
});

describe("hooks/db-roles.sh on a real PostgreSQL", () => {
  it("fails, naming the owner, on a database created before the Entra administrators (superuser-owned)", async () => {
    const database = await createDatabase(admin.username || "postgres");
    const run = await runScript(database);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(
        `db-roles: database ${database} is owned by ${admin.username || "postgres"}, which ${roles.migrate} may not take over`,
      ),
    );
    expect(run.stderr).toMatch(/created before its Entra administrators existed/);
    expect(run.stdout).not.toMatch(/db-roles: done/);
  });

  it("takes the database over from the other administrator, and every grant takes effect", async () => {
    const database = await createDatabase(roles.deployer);
    const run = await runScript(database);
    expect(run.stderr).not.toMatch(/ERROR/);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/db-roles: done/);
    const owner = await asAdmin(
      database,
      async (client) =>
        (
          await client.query<{ owner: string }>(
            "SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = current_database()",
          )
        ).rows[0]!.owner,
    );
    expect(owner).toBe(roles.migrate);

    // The migrate role creates the schema; the services read and write it, through default privileges.
    await asRole(database, roles.migrate, (client) =>
      client.query("CREATE TABLE batches (id int PRIMARY KEY, name text)"),
    );
    await asRole(database, roles.orchestrator, async (client) => {
      await client.query("INSERT INTO batches VALUES (1, 'pilot')");
      expect((await client.query("SELECT name FROM batches")).rows).toEqual([{ name: "pilot" }]);
      // No CREATE on the database either: no service makes a schema (the dead-letter table is a
      // migration, 0013_bus_dead_letters).
      await expect(client.query(`CREATE SCHEMA matoolkit_dapr_${suffix}`)).rejects.toThrow(
        /permission denied/,
      );
      // No DDL in the application's schema.
      await expect(client.query("CREATE TABLE intruder (id int)")).rejects.toThrow(/permission denied/);
    });
    // The state store makes its own tables, and cannot touch the application's.
    await asRole(database, roles.dapr, async (client) => {
      await client.query("CREATE TABLE dapr_state (key text PRIMARY KEY, value jsonb)");
      await expect(client.query("SELECT * FROM batches")).rejects.toThrow(/permission denied/);
    });

    // Idempotent: a second run (every azd provision) changes nothing and succeeds, now with a
    // table of its own in the schema.
    const again = await runScript(database);
    expect(again.code, again.stderr).toBe(0);
  });

  it("fails, naming each missing grant, when the public schema is not the migrate role's to grant on", async () => {
    // The database is the migrate role's, but its public schema belongs to a role the migrate
    // role is no member of: GRANT ... ON SCHEMA public then only WARNS "no privileges were granted".
    const database = await createDatabase(roles.migrate);
    await asAdmin(database, (client) => client.query(`ALTER SCHEMA public OWNER TO ${roles.keeper}`));
    const run = await runScript(database);
    expect(run.stderr).toMatch(/no privileges were granted/);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(
      `db-roles: not granted: ${roles.migrate} (migrations) CREATE on schema public; ${roles.dapr} CREATE on schema public`,
    );
    expect(run.stdout).not.toMatch(/db-roles: done/);
  });
});

describe("modules/postgres.bicep", () => {
  const disk: Sources = {
    read: (path) => readFileSync(join(root, path), "utf8"),
    exists: () => true,
    list: () => [],
  };

  it("creates the database after every Entra administrator", () => {
    expect(postgresOrderProblems(disk)).toEqual([]);
  });

  it("fails on a database created before the administrators", () => {
    const original = disk.read("deploy/aca/modules/postgres.bicep");
    const reordered = original.replace("  dependsOn: [migrateAdmin]\n}", "}");
    expect(reordered).not.toBe(original);
    const broken: Sources = {
      ...disk,
      read: (path) => (path.endsWith("postgres.bicep") ? reordered : disk.read(path)),
    };
    expect(postgresOrderProblems(broken)).toEqual([
      "deploy/aca/modules/postgres.bicep: database database is created without waiting for Entra administrator deployerAdmin",
      "deploy/aca/modules/postgres.bicep: database database is created without waiting for Entra administrator migrateAdmin",
    ]);
  });
});
