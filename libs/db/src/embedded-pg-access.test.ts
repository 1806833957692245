import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "@matoolkit/testing";
import { locatePostgresBinaries } from "./embedded-pg-binaries.ts";
import { serverIdentity } from "./embedded-pg-os-user.ts";
import { initialiseCluster, spawnServer, stopServer } from "./embedded-pg-process.ts";
import { embeddedPasswordFile, startEmbeddedPostgres } from "./embedded-postgres.ts";

/**
 * Issue 25, finding 1: the embedded PostgreSQL gave its superuser the fixed password
 * `matoolkit-embedded` on 127.0.0.1, so any local user (`nobody`) could log in and run
 * `COPY … FROM PROGRAM`. Only the user running matoolkit may log in: the password is random per
 * data directory, in a file only that user can read.
 */
const LEGACY_PASSWORD = "matoolkit-embedded";
const root = mkdtempSync(join(tmpdir(), "matoolkit-embedded-access-"));
chmodSync(root, 0o755); // as root the server runs as `postgres`, which must enter it
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function login(port: number, password: string, database = "postgres"): Promise<unknown> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port,
    user: "postgres",
    password,
    database,
    connectionTimeoutMillis: 5000,
  });
  client.on("error", () => {});
  try {
    await client.connect();
    return (await client.query<{ one: number }>("SELECT 1 AS one")).rows[0]?.one;
  } finally {
    await client.end().catch(() => {});
  }
}

const refused = { code: "28P01" }; // invalid_password: the server said no

/** Runs a node script as the OS user `nobody` (tests run as root in CI): what another local user sees. */
function asNobody(script: string): { status: number | null; stdout: string; stderr: string } {
  const uid = Number(spawnSync("id", ["-u", "nobody"]).stdout.toString().trim());
  const gid = Number(spawnSync("id", ["-g", "nobody"]).stdout.toString().trim());
  const run = spawnSync(nodeForNobody(), ["--input-type=module", "-e", script], {
    uid,
    gid,
    cwd: "/",
    encoding: "utf8",
    timeout: 20_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/**
 * This process's Node, where `nobody` can run it: the Node that CI brings (scripts/node) lives in
 * root's 0700 home, so a copy goes into the test's own directory (0755).
 */
function nodeForNobody(): string {
  const copy = join(root, "node");
  if (!existsSync(copy)) {
    copyFileSync(process.execPath, copy);
    chmodSync(copy, 0o755);
  }
  return copy;
}

const pgModule = createRequire(import.meta.url).resolve("pg");

describe("embedded PostgreSQL access", { timeout: 120_000 }, () => {
  it("refuses the old fixed password and anyone without the password file, which only its owner can read", async () => {
    const dataDir = join(root, "data-dir", "postgres");
    const port = await freePort();
    const server = await startEmbeddedPostgres({ dataDir, port, persistent: false });
    try {
      // The directory it creates for the cluster is private: others may at most pass through (as root,
      // the `postgres` OS user must), never list or read it.
      expect(statSync(join(root, "data-dir")).mode & 0o077).toBe(process.getuid?.() === 0 ? 0o011 : 0);
      await expect(login(port, LEGACY_PASSWORD)).rejects.toMatchObject(refused);
      await expect(login(port, "")).rejects.toThrow();
      // TCP on 127.0.0.1 only: no Unix socket in /tmp for another user to reach or block.
      expect(existsSync(join(tmpdir(), `.s.PGSQL.${port}`))).toBe(false);
      expect(await login(port, new URL(server.adminUrl).password)).toBe(1);

      const file = embeddedPasswordFile(dataDir);
      const stat = statSync(file);
      expect(stat.mode & 0o777).toBe(0o600);
      expect(stat.uid).toBe(process.getuid?.());
      expect(decodeURIComponent(new URL(server.adminUrl).password)).toBe(readFileSync(file, "utf8").trim());

      if (process.getuid?.() === 0) {
        // Another local user: cannot read the file, and the server refuses the old password.
        const other = asNobody(`
          import { readFileSync } from "node:fs";
          const { default: pg } = await import(${JSON.stringify(pgModule)});
          try { readFileSync(${JSON.stringify(file)}); console.log("file: readable"); }
          catch (error) { console.log("file: " + error.code); }
          for (const password of [${JSON.stringify(LEGACY_PASSWORD)}, "postgres", "x"]) {
            const client = new pg.Client({ host: "127.0.0.1", port: ${port}, user: "postgres", password, database: "postgres" });
            try { await client.connect(); await client.query("COPY (SELECT 1) TO PROGRAM 'true'"); console.log("login: superuser"); }
            catch (error) { console.log("login: " + (error.code ?? error.message)); }
            finally { await client.end().catch(() => {}); }
          }`);
        expect(other.stderr).toBe("");
        expect(other.stdout.trim().split("\n")).toEqual([
          "file: EACCES",
          "login: 28P01",
          "login: 28P01",
          "login: 28P01",
        ]);
      }
    } finally {
      await server.stop();
    }
  });

  it("moves a data directory made with the old fixed password to a password of its own, keeping its data", async () => {
    const dataDir = join(root, "legacy");
    const port = await freePort();
    // A cluster as earlier versions left it: initialised with the fixed password, with data in it.
    const spec = {
      binaries: await locatePostgresBinaries(),
      identity: await serverIdentity(),
      dataDir,
      port,
      user: "postgres",
      password: LEGACY_PASSWORD,
      onLog: () => {},
    };
    await initialiseCluster(spec);
    const legacy = await spawnServer(spec, 60_000);
    const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password: LEGACY_PASSWORD });
    await client.connect();
    await client.query("CREATE TABLE kept AS SELECT 42 AS answer");
    await client.end();
    await stopServer(legacy);

    const logged: string[] = [];
    const first = await startEmbeddedPostgres({
      dataDir,
      port,
      persistent: true,
      onLog: (line) => logged.push(line),
    });
    const password = readFileSync(embeddedPasswordFile(dataDir), "utf8").trim();
    try {
      await expect(login(port, LEGACY_PASSWORD)).rejects.toMatchObject(refused);
      const check = new pg.Client({ connectionString: first.adminUrl });
      await check.connect();
      expect((await check.query("SELECT answer FROM kept")).rows).toEqual([{ answer: 42 }]);
      await check.end();
    } finally {
      await first.stop();
    }
    // Neither the new password nor the SQL that set it reached the server's log.
    expect(logged.filter((line) => line.includes(password) || /ALTER ROLE/iu.test(line))).toEqual([]);

    // The next start uses the file as it is.
    const second = await startEmbeddedPostgres({ dataDir, port, persistent: false });
    try {
      expect(readFileSync(embeddedPasswordFile(dataDir), "utf8").trim()).toBe(password);
      expect(await login(port, password)).toBe(1);
      await expect(login(port, LEGACY_PASSWORD)).rejects.toMatchObject(refused);
    } finally {
      await second.stop();
    }
  });

  it("finishes a move interrupted after the password file was written", async () => {
    const dataDir = join(root, "interrupted");
    const port = await freePort();
    const spec = {
      binaries: await locatePostgresBinaries(),
      identity: await serverIdentity(),
      dataDir,
      port,
      user: "postgres",
      password: LEGACY_PASSWORD,
      onLog: () => {},
    };
    await initialiseCluster(spec);
    // The crash came after the file was written and before the role's password changed.
    const written = "Zm9yLXRoZS1pbnRlcnJ1cHRlZC1tb3ZlLXRlc3Qtb25seQ";
    writeFileSync(embeddedPasswordFile(dataDir), `${written}\n`, { mode: 0o600 });
    const server = await startEmbeddedPostgres({ dataDir, port, persistent: false });
    try {
      expect(await login(port, written)).toBe(1);
      await expect(login(port, LEGACY_PASSWORD)).rejects.toMatchObject(refused);
    } finally {
      await server.stop();
    }
  });

  it("refuses to start with a password file other users can read, or one that no longer matches", async () => {
    const dataDir = join(root, "exposed");
    const port = await freePort();
    const server = await startEmbeddedPostgres({ dataDir, port, persistent: true });
    await server.stop();
    const file = embeddedPasswordFile(dataDir);
    const password = readFileSync(file, "utf8").trim();

    chmodSync(file, 0o644);
    const exposed = await startEmbeddedPostgres({ dataDir, port, persistent: true }).catch(
      (error: unknown) => error as Error,
    );
    expect(exposed).toBeInstanceOf(Error);
    expect((exposed as Error).message).toContain(`${file} can be read or changed by other users`);
    expect((exposed as Error).message).not.toContain(password);

    writeFileSync(file, "not-the-password-of-this-cluster\n", { mode: 0o600 });
    chmodSync(file, 0o600);
    const mismatch = await startEmbeddedPostgres({ dataDir, port, persistent: true }).catch(
      (error: unknown) => error as Error,
    );
    expect(mismatch).toBeInstanceOf(Error);
    expect((mismatch as Error).message).toContain(`the password in ${file} does not match`);
    expect((mismatch as Error).message).not.toContain("not-the-password-of-this-cluster");
    // Refusing stopped the server it had started: the port is free again for the next start.
    writeFileSync(file, `${password}\n`, { mode: 0o600 });
    const again = await startEmbeddedPostgres({ dataDir, port, persistent: false });
    await again.stop();
  });
});

describe("embedded PostgreSQL port taken by another program", { timeout: 60_000 }, () => {
  it("refuses to start instead of sending the password to whatever listens there", async () => {
    // Another local user binds the port first and asks for the password in clear text.
    const received: Buffer[] = [];
    const squatter = createServer((socket) => {
      socket.on("data", (chunk: Buffer) => {
        received.push(chunk);
        // AuthenticationCleartextPassword: 'R', length 8, code 3.
        if (received.length === 1) socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]));
      });
      socket.on("error", () => {});
    });
    const port = await freePort();
    await new Promise<void>((resolve) => squatter.listen(port, "127.0.0.1", resolve));
    const dataDir = join(root, "squatted");
    try {
      const error = await startEmbeddedPostgres({ dataDir, port, persistent: false }).catch(
        (caught: unknown) => caught as Error,
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain(`port ${port} on 127.0.0.1 is already in use`);
      const password = readFileSync(embeddedPasswordFile(dataDir), "utf8").trim();
      expect(Buffer.concat(received).toString("latin1")).not.toContain(password);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(embeddedPasswordFile(dataDir), { force: true });
    }
  });
  it("sends no password to a program that takes the port between the check and the server's bind", async () => {
    // The race: the port is free when checked, another program binds it before PostgreSQL does;
    // PostgreSQL then fails to bind and exits, and a login tried meanwhile reached that program.
    // A wrapper in place of the postgres binary says when it starts and waits 300 ms before
    // starting the real server, so the squatter is sure to bind first.
    const received: Buffer[] = [];
    const squatter = createServer((socket) => {
      socket.on("data", (chunk: Buffer) => {
        received.push(chunk);
        if (received.length === 1) socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]));
      });
      socket.on("error", () => {});
    });
    const binaries = await locatePostgresBinaries();
    const signals = join(root, "race-signals");
    mkdirSync(signals, { mode: 0o777 });
    chmodSync(signals, 0o777);
    const started = join(signals, "started");
    const wrapper = join(root, "postgres-after-a-pause");
    writeFileSync(wrapper, `#!/bin/sh\ntouch '${started}'\nsleep 0.3\nexec '${binaries.postgres}' "$@"\n`, {
      mode: 0o755,
    });
    const port = await freePort();
    const password = "race-password-0123456789abcdef";
    const spec = {
      binaries,
      identity: await serverIdentity(),
      dataDir: join(root, "race"),
      port,
      user: "postgres",
      password,
      onLog: () => {},
    };
    await initialiseCluster(spec);
    try {
      const starting = spawnServer({ ...spec, binaries: { ...binaries, postgres: wrapper } }, 20_000).catch(
        (caught: unknown) => caught as Error,
      );
      while (!existsSync(started)) await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise<void>((resolve) => squatter.listen(port, "127.0.0.1", resolve));
      const outcome = await starting;
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as Error).message).toMatch(/PostgreSQL did not start \(exited with \d+\)/);
      expect(Buffer.concat(received).toString("latin1")).not.toContain(password);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });
});
