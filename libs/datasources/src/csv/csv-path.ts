import { constants } from "node:fs";
import { open, readlink, realpath, type FileHandle } from "node:fs/promises";
import { isAbsolute, posix, resolve, win32 } from "node:path";
import { isReallyWithin, isWithin } from "@matoolkit/domain/path-containment";

/**
 * Where a runbook's `csv` source may read: only below one directory (MATOOLKIT_CSV_DIR). The
 * admin API must not be a way to read the server's files (`path: /etc/passwd`, `../.matoolkit/…`),
 * so a path is refused when it is absolute, climbs out with `..`, or leads out through a symlink.
 * Messages name the runbook's own path, never the server's directory layout beyond it.
 */
export type CsvPathCheck = { ok: true; relativePath: string } | { ok: false; problem: string };

/** The checks that need no file system: the same answer at publish time and on every host. */
export function checkCsvPathText(path: string): CsvPathCheck {
  if (path.includes("\0")) return { ok: false, problem: "must not contain a NUL character" };
  if (isAbsolute(path) || win32.isAbsolute(path) || posix.isAbsolute(path)) {
    return { ok: false, problem: "must be relative to the CSV directory (MATOOLKIT_CSV_DIR), not absolute" };
  }
  const segments = path.split(/[\\/]/u);
  if (segments.includes("..")) {
    return { ok: false, problem: 'must not contain ".." (it must stay inside the CSV directory)' };
  }
  return { ok: true, relativePath: path };
}

const escapes = "leads outside the CSV directory (MATOOLKIT_CSV_DIR) through a symbolic link";

/**
 * Publish time: the text checks, then symlinks resolved as far as the path exists today (the
 * file, or the whole directory, may be created later, and the scheduler may run on another host).
 */
export async function checkCsvPath(csvDir: string, path: string): Promise<CsvPathCheck> {
  const text = checkCsvPathText(path);
  if (!text.ok) return text;
  try {
    return isReallyWithin(csvDir, resolve(csvDir, path)) ? text : { ok: false, problem: escapes };
  } catch {
    // A symlink loop: its message names server paths, which the runbook's author must not see.
    return { ok: false, problem: "cannot be resolved (a loop of symbolic links)" };
  }
}

export class CsvPathRefused extends Error {}

/**
 * Read time: resolves every symlink, checks the real file is inside the directory and opens it.
 * A symlink swapped after publish is caught here; one swapped between the check and the open is
 * caught by asking the kernel which file the descriptor really is (Linux's /proc/self/fd).
 */
export async function openCsvBelow(csvDir: string, path: string): Promise<FileHandle> {
  const text = checkCsvPathText(path);
  if (!text.ok) throw new CsvPathRefused(text.problem);
  const root = await realpath(csvDir);
  const real = await realpath(resolve(root, path));
  if (!isWithin(root, real)) throw new CsvPathRefused(escapes);
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => real);
    if (!isWithin(root, opened)) throw new CsvPathRefused(escapes);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}
