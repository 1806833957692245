import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cachedBinaries } from "./embedded-pg-binary-cache.ts";
import { directoryBlockingPostgresUser } from "./embedded-pg-os-user.ts";

/**
 * Issue 11: as root with the clone in a private (0700) directory, `initdb` failed with EACCES
 * because the `postgres` OS user cannot execute binaries under it. The binaries are copied once to
 * a cache directory others can enter, read-only for them, and reused while they match the package.
 */
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function privatePackage(): string {
  const home = mkdtempSync(join(tmpdir(), "mt-private-home-"));
  made.push(home);
  chmodSync(home, 0o700);
  const native = join(home, "node_modules", "native");
  mkdirSync(join(native, "bin"), { recursive: true });
  mkdirSync(join(native, "lib"), { recursive: true });
  writeFileSync(join(native, "bin", "postgres"), "#!/bin/sh\necho 18.4\n", { mode: 0o700 });
  writeFileSync(join(native, "lib", "libpq.so.5.18"), "library", { mode: 0o600 });
  symlinkSync("libpq.so.5.18", join(native, "lib", "libpq.so.5"));
  return native;
}

function cacheParent(): string {
  const parent = join(tmpdir(), `mt-pg-cache-${process.pid}-${Math.random().toString(36).slice(2)}`);
  made.push(parent);
  return parent;
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe("PostgreSQL binaries in a private directory", () => {
  it("are copied to a cache the postgres user can execute, read-only for others", async () => {
    const source = privatePackage();
    const parent = cacheParent();
    const copy = await cachedBinaries({
      source,
      version: "18.4.0",
      name: "postgres-test",
      parents: [parent],
    });

    expect(copy).toBe(join(parent, "postgres-test"));
    expect(readFileSync(join(copy, "bin", "postgres"), "utf8")).toBe("#!/bin/sh\necho 18.4\n");
    expect(mode(join(copy, "bin", "postgres"))).toBe(0o755);
    expect(mode(join(copy, "lib", "libpq.so.5.18"))).toBe(0o644);
    expect(mode(copy)).toBe(0o755);
    expect(readlinkSync(join(copy, "lib", "libpq.so.5"))).toBe("libpq.so.5.18");
    if (process.getuid?.() === 0) {
      // As root (CI here): the original is out of the postgres user's reach, the copy is not.
      expect(directoryBlockingPostgresUser(join(source, "bin", "postgres"))).toBeDefined();
      expect(directoryBlockingPostgresUser(join(copy, "bin", "postgres"))).toBeUndefined();
    }
  });

  it("reuses a matching copy and replaces it when the package's programs change", async () => {
    const source = privatePackage();
    const parent = cacheParent();
    const request = { source, version: "18.4.0", name: "postgres-test", parents: [parent] };
    const first = await cachedBinaries(request);
    const firstInode = statSync(join(first, "bin", "postgres")).ino;

    expect(await cachedBinaries(request)).toBe(first);
    expect(statSync(join(first, "bin", "postgres")).ino).toBe(firstInode);

    // A reinstall of the package (same version, other build): the copy no longer matches.
    writeFileSync(join(source, "bin", "postgres"), "#!/bin/sh\necho 18.4 rebuilt\n", { mode: 0o700 });
    const second = await cachedBinaries(request);
    expect(readFileSync(join(second, "bin", "postgres"), "utf8")).toBe("#!/bin/sh\necho 18.4 rebuilt\n");
  });

  it("names every refused cache directory in one error instead of failing deep in initdb", async () => {
    const source = privatePackage();
    const worldWritable = cacheParent();
    mkdirSync(worldWritable, { mode: 0o777 });
    chmodSync(worldWritable, 0o777);
    const error = await cachedBinaries({
      source,
      version: "18.4.0",
      name: "postgres-test",
      parents: [worldWritable],
    }).catch((caught: unknown) => caught as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(`${worldWritable} (writable by other users)`);
    expect((error as Error).message).toContain("set DATABASE_URL");
  });
});
