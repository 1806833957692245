import { relative, resolve, isAbsolute } from "node:path";

/** What a fresh clone's examples use; holds only the shipped sample files. */
export const defaultCsvDir = "examples";

/**
 * MATOOLKIT_CSV_DIR at start-up: the one directory `csv` sources may read, as an absolute path
 * (default `examples`, resolved against the working directory; `none` refuses every csv source).
 * A directory that holds the data directory is refused: its signing key and database files would
 * be one runbook away from the query preview.
 */
export function csvDirFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  dataDir: string,
): string | undefined {
  const raw = env.MATOOLKIT_CSV_DIR?.trim() || defaultCsvDir;
  if (raw === "none") return undefined;
  const csvDir = resolve(raw);
  const fromCsvDir = relative(csvDir, resolve(dataDir));
  if (fromCsvDir === "" || (!fromCsvDir.startsWith("..") && !isAbsolute(fromCsvDir))) {
    throw new Error(
      "Invalid configuration: MATOOLKIT_CSV_DIR: must not be or contain the data directory (MATOOLKIT_DATA_DIR), " +
        "which holds the signing key and the embedded database",
    );
  }
  return csvDir;
}
