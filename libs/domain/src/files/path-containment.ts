import { readlinkSync, realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";

/**
 * Whether one path is inside another, decided on what the paths ARE, not on how they are spelt.
 * Text prefixes lie (`/srv/data` "starts" `/srv/data-old`, `..data` "starts with" `..`), and so
 * do paths with a symlink in them. Every place that keeps a reader or a server inside a directory
 * (the CSV directory, the data directory, the dashboard's files) asks here.
 */

/**
 * By path segments, on the paths as written (no file system): true when `candidate` is `root`
 * itself (only with `orSame`) or below it. `..`, `.`, doubled and trailing separators are
 * resolved first; `..data` is a name like any other, only a whole `..` segment climbs out.
 */
export function isWithin(root: string, candidate: string, options: { orSame?: boolean } = {}): boolean {
  const rel = relative(resolve(root), resolve(candidate));
  if (rel === "") return options.orSame === true;
  // Another drive on Windows: relative() gives an absolute path.
  if (isAbsolute(rel)) return false;
  return rel !== ".." && !rel.startsWith(`..${sep}`);
}

/**
 * The real path (every symlink resolved) of a path that may not exist yet: the part that exists is
 * resolved by the operating system, the rest appended; a dangling symlink is followed by hand
 * (it still points somewhere, and the file may be created there later).
 */
export function realPathAsFarAsItExists(path: string): string {
  return resolveFrom(resolve(path), 0);
}

const MAX_LINKS = 40; // as Linux's ELOOP limit

function resolveFrom(target: string, followed: number): string {
  const missing: string[] = [];
  for (let existing = target; ;) {
    try {
      return resolve(realpathSync.native(existing), ...missing);
    } catch {
      const link = readLink(existing);
      if (link !== undefined) {
        if (followed >= MAX_LINKS) throw new Error(`too many levels of symbolic links at ${existing}`);
        return resolveFrom(resolve(existing, "..", link, ...missing), followed + 1);
      }
      const parent = resolve(existing, "..");
      if (parent === existing) return target;
      missing.unshift(relative(parent, existing));
      existing = parent;
    }
  }
}

function readLink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/**
 * By real paths: true when `candidate`, with every symlink resolved (as far as it exists), lies
 * inside `root`, with its symlinks resolved too. A symlink inside `root` that points out is
 * outside; one that points to another place inside is inside.
 */
export function isReallyWithin(root: string, candidate: string, options: { orSame?: boolean } = {}): boolean {
  return isWithin(realPathAsFarAsItExists(root), realPathAsFarAsItExists(candidate), options);
}
