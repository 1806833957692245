import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { embeddedPostgresUrl } from "@matoolkit/db";

/** The database the drill's system uses, and how to make it unavailable. */
export interface DrillDatabase {
  readonly kind: "embedded" | "server";
  /** Environment for the system: DATABASE_URL in server mode, nothing in embedded mode. */
  readonly env: Record<string, string>;
  /** A URL the drill reads results through (once the database is back). */
  readonly url: string;
  /** Keeps the database unavailable to the system for `ms`. */
  outage(ms: number): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * Embedded mode: the system's own PostgreSQL (data in `<dataDir>/postgres`). Its supervisor
 * restarts a killed server within a second, so the drill kills it again and again (SIGKILL of
 * the postmaster, as an OOM kill would) until the outage has lasted long enough.
 */
export function embeddedDrillDatabase(dataDir: string, port: number): DrillDatabase {
  const pidFile = path.join(dataDir, "postgres", "postmaster.pid");
  return {
    kind: "embedded",
    env: { MATOOLKIT_EMBEDDED_PG_PORT: String(port) },
    // Read when the drill needs it: the system writes the password file when it first starts.
    get url() {
      return embeddedPostgresUrl(path.join(dataDir, "postgres"), port, "matoolkit");
    },
    async outage(ms) {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        const pid = existsSync(pidFile)
          ? Number.parseInt(readFileSync(pidFile, "utf8").split("\n")[0] ?? "", 10)
          : NaN;
        if (Number.isSafeInteger(pid) && pid > 0) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {
            // Already gone (killed a moment ago, not restarted yet).
          }
        }
        await sleep(200);
      }
    },
    async dispose() {},
  };
}

/**
 * Server mode (DATABASE_URL set): the drill cannot restart the machine's server, so it makes its
 * own database unavailable instead: connections refused (ALLOW_CONNECTIONS false) and every
 * existing connection terminated, repeatedly, which is what a restart looks like to clients.
 */
export async function serverDrillDatabase(serverUrl: string): Promise<DrillDatabase> {
  const name = `matoolkit_drill_outage_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const terminateAll = () =>
    admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [name]);
  return {
    kind: "server",
    env: { DATABASE_URL: url.toString() },
    url: url.toString(),
    async outage(ms) {
      const until = Date.now() + ms;
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
      try {
        while (Date.now() < until) {
          await terminateAll();
          await sleep(500);
        }
      } finally {
        await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
      }
    },
    async dispose() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}
