import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { directoryBlockingPostgresUser } from "./embedded-pg-os-user.ts";

export interface BinaryCacheRequest {
  /** The package's `native` directory. */
  readonly source: string;
  readonly version: string;
  /** Directory name of the copy, e.g. postgres-18.4.0-linux-x64. */
  readonly name: string;
  /** Candidate parent directories, tried in order. */
  readonly parents: readonly string[];
}

const MANIFEST = ".matoolkit-manifest.json";

type Entry = { readonly size: number; readonly sha256?: string } | { readonly link: string };
interface Manifest {
  readonly version: string;
  readonly files: Record<string, Entry>;
}

/**
 * A root-owned copy of the PostgreSQL binaries that other users can read and execute but not
 * change (the server runs as `postgres` from it, so it must not be able to swap its own programs).
 * Reused while its manifest matches: same package version, every file present with its size, and
 * the executables' SHA-256 equal to the package's. Copied to a temporary name and renamed, so a
 * crash mid-copy or two starts at once never leave a half copy in use.
 */
export async function cachedBinaries(request: BinaryCacheRequest): Promise<string> {
  const refused: string[] = [];
  for (const parent of request.parents) {
    const problem = prepareParent(parent);
    if (problem !== undefined) {
      refused.push(`${parent} (${problem})`);
      continue;
    }
    const target = join(parent, request.name);
    if (isValidCopy(target, request)) return target;
    rmSync(target, { recursive: true, force: true });
    const staging = `${target}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
    try {
      cpSync(request.source, staging, { recursive: true, verbatimSymlinks: true });
      const manifest = makeReadOnlyForOthers(staging, request.version);
      writeFileSync(join(staging, MANIFEST), JSON.stringify(manifest), { mode: 0o644 });
      renameSync(staging, target);
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      // Another process finished the same copy first: use it when it checks out.
      if (isValidCopy(target, request)) return target;
      refused.push(`${parent} (copy failed: ${error instanceof Error ? error.message : String(error)})`);
      continue;
    }
    return target;
  }
  throw new Error(
    `embedded PostgreSQL runs as the 'postgres' user as root and cannot execute the binaries in node_modules ` +
      `(a parent directory is private); no usable cache directory for a copy: ${refused.join("; ")}. ` +
      `Move the clone to a directory others can enter, run as a non-root user, or set DATABASE_URL`,
  );
}

/** Why `parent` cannot hold the copy, or undefined when it can (created when missing). */
function prepareParent(parent: string): string | undefined {
  try {
    mkdirSync(parent, { recursive: true, mode: 0o755 });
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? "cannot create";
  }
  const stat = statSync(parent);
  if (stat.uid !== process.getuid?.()) return "not owned by us";
  if ((stat.mode & 0o022) !== 0) return "writable by other users";
  if ((stat.mode & 0o001) === 0 || directoryBlockingPostgresUser(join(parent, "x")) !== undefined)
    return "the postgres user cannot enter it";
  return undefined;
}

function makeReadOnlyForOthers(root: string, version: string): Manifest {
  const files: Record<string, Entry> = {};
  for (const path of walk(root)) {
    const stat = lstatSync(path);
    const key = relative(root, path);
    if (stat.isSymbolicLink()) files[key] = { link: readlinkSync(path) };
    else if (stat.isDirectory()) chmodSync(path, 0o755);
    else {
      chmodSync(path, stat.mode & 0o100 ? 0o755 : 0o644);
      files[key] = { size: stat.size, ...(isExecutable(key) ? { sha256: sha256(path) } : {}) };
    }
  }
  chmodSync(root, 0o755);
  return { version, files };
}

function isValidCopy(target: string, request: BinaryCacheRequest): boolean {
  if (!existsSync(join(target, MANIFEST))) return false;
  try {
    const stat = statSync(target);
    if (stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) return false;
    const manifest = JSON.parse(readFileSync(join(target, MANIFEST), "utf8")) as Manifest;
    if (manifest.version !== request.version) return false;
    return Object.entries(manifest.files).every(([key, entry]) => {
      const path = join(target, key);
      if ("link" in entry) return readlinkSync(path) === entry.link;
      if (lstatSync(path).size !== entry.size) return false;
      // Executables are checked against the package itself, so a reinstall is noticed.
      return (
        entry.sha256 === undefined ||
        (sha256(path) === entry.sha256 && sha256(join(request.source, key)) === entry.sha256)
      );
    });
  } catch {
    return false;
  }
}

function isExecutable(key: string): boolean {
  return key.startsWith(`bin/`);
}

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    yield path;
    if (entry.isDirectory()) yield* walk(path);
  }
}
