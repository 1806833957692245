import { resolve } from "node:path";
import { isReallyWithin } from "@matoolkit/domain/path-containment";

/** What a fresh clone's examples use; holds only the shipped sample files. */
export const defaultCsvDir = "examples";

/**
 * MATOOLKIT_CSV_DIR at start-up: the one directory `csv` sources may read, as an absolute path
 * (default `examples`, resolved against the working directory; `none` refuses every csv source).
 * A directory that holds the data directory is refused: its signing key and database files would
 * be one runbook away from the query preview. Decided on real paths by path segments (a data
 * directory named `..data`, or reached through a symlink, is inside all the same).
 */
export function csvDirFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  dataDir: string,
): string | undefined {
  const raw = env.MATOOLKIT_CSV_DIR?.trim() || defaultCsvDir;
  if (raw === "none") return undefined;
  const csvDir = resolve(raw);
  if (isReallyWithin(csvDir, dataDir, { orSame: true })) {
    throw new Error(
      "Invalid configuration: MATOOLKIT_CSV_DIR: must not be or contain the data directory (MATOOLKIT_DATA_DIR), " +
        "which holds the signing key and the embedded database",
    );
  }
  return csvDir;
}
