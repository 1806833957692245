import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@matoolkit/dapr-harness/free-port";
import { startEmbeddedPostgres } from "@matoolkit/db";

/**
 * The PostgreSQL server a test run uses, in order of preference:
 * 1. TEST_DATABASE_URL (CI runs the suite a second time against the machine's server);
 * 2. testcontainers, when a Docker engine answers;
 * 3. an embedded PostgreSQL in a temporary directory (a fresh machine with nothing installed).
 */
export interface TestPostgresServer {
  readonly kind: "external" | "testcontainers" | "embedded";
  /** A URL to a database we may connect to for CREATE/DROP DATABASE. */
  readonly adminUrl: string;
  urlFor(database: string): string;
  stop(): Promise<void>;
}

export async function startTestPostgresServer(env: NodeJS.ProcessEnv): Promise<TestPostgresServer> {
  const external = env.TEST_DATABASE_URL;
  if (external !== undefined && external !== "") {
    return {
      kind: "external",
      adminUrl: external,
      urlFor: (db) => withDatabase(external, db),
      stop: async () => {},
    };
  }
  if (dockerEngineAvailable(env)) {
    const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
    const container = await new PostgreSqlContainer("postgres:16-alpine").start();
    const adminUrl = container.getConnectionUri();
    return {
      kind: "testcontainers",
      adminUrl,
      urlFor: (db) => withDatabase(adminUrl, db),
      stop: async () => {
        await container.stop();
      },
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), "matoolkit-test-pg-"));
  // As root, PostgreSQL runs as the `postgres` OS user, which must be able to enter this directory.
  chmodSync(dataDir, 0o755);
  const server = await startEmbeddedPostgres({
    dataDir: join(dataDir, "data"),
    port: await freePort(),
    persistent: false,
  });
  return {
    kind: "embedded",
    adminUrl: server.adminUrl,
    urlFor: server.urlFor,
    stop: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function dockerEngineAvailable(env: NodeJS.ProcessEnv): boolean {
  if (env.MATOOLKIT_TEST_NO_DOCKER === "1") return false;
  const host = env.DOCKER_HOST;
  if (host !== undefined && host !== "") return true;
  // The docker CLI may be installed without an engine; only a socket means an engine may answer.
  return existsSync("/var/run/docker.sock");
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/** A port for a server that binds it later (libs/dapr-harness/src/free-port.ts says why not port 0). */
export { freePort };
