import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliError } from "../../errors.ts";
import { authRecordFile, loadAuthRecord, saveAuthRecord } from "./auth-record-store.ts";
import { fileCachePersistence, tokenCacheFile, type TokenCacheContextLike } from "./file-token-cache.ts";

/** MSAL's side of the plugin contract: what it hands to before/afterCacheAccess. */
function cacheContext(changed: boolean, contents = "{}") {
  const seen: string[] = [];
  const context: TokenCacheContextLike = {
    cacheHasChanged: changed,
    tokenCache: { serialize: () => contents, deserialize: (text) => seen.push(text) },
  };
  return { context, seen };
}

describe("file token cache", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "matoolkit-cli-cache-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("writes MSAL's cache only when it changed, owner-only in an owner-only directory, and reads it back", async () => {
    const state = path.join(dir, "state");
    const plugin = await fileCachePersistence(state)({ name: "matoolkit-cli" });
    const file = tokenCacheFile(state, "matoolkit-cli");
    expect(file).toBe(path.join(state, "matoolkit-cli.cache.json"));

    await plugin.afterCacheAccess(cacheContext(false, '{"unchanged":true}').context);
    await expect(stat(file)).rejects.toThrow();

    await plugin.afterCacheAccess(cacheContext(true, '{"RefreshToken":{}}').context);
    expect(await readFile(file, "utf8")).toBe('{"RefreshToken":{}}');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(state)).mode & 0o777).toBe(0o700);

    const { context, seen } = cacheContext(false);
    await plugin.beforeCacheAccess(context);
    expect(seen).toEqual(['{"RefreshToken":{}}']);
  });

  it("starts empty when there is no file, and treats a damaged one as empty (a new sign-in replaces it)", async () => {
    const plugin = await fileCachePersistence(dir)({ name: "matoolkit-cli" });
    const empty = cacheContext(false);
    await plugin.beforeCacheAccess(empty.context);
    expect(empty.seen).toEqual([]);

    await writeFile(tokenCacheFile(dir, "matoolkit-cli"), "{ damaged");
    const refusing: TokenCacheContextLike = {
      cacheHasChanged: false,
      tokenCache: {
        serialize: () => "{}",
        deserialize: (text) => JSON.parse(text),
      },
    };
    await expect(plugin.beforeCacheAccess(refusing)).resolves.toBeUndefined();
  });

  it("refuses a cache name that could leave the directory", () => {
    expect(() => tokenCacheFile(dir, "../escape")).toThrow("Unusable token cache name");
  });
});

describe("saved account (AuthenticationRecord)", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "matoolkit-cli-record-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const record = {
    authority: "login.microsoftonline.com",
    homeAccountId: "uid.tid",
    clientId: "3f1c9a5e-2b7d-4c8e-9f10-1a2b3c4d5e6f",
    tenantId: "0b5a2c11-59e4-4c9d-9a51-6f0ab3d3f2a1",
    username: "operator@contoso.test",
  };

  it("round-trips through an owner-only file", async () => {
    await saveAuthRecord(dir, record);
    expect(await loadAuthRecord(dir)).toEqual(record);
    expect((await stat(authRecordFile(dir))).mode & 0o777).toBe(0o600);
  });

  it("is undefined before any sign-in, and a damaged file says how to recover", async () => {
    expect(await loadAuthRecord(dir)).toBeUndefined();
    await writeFile(authRecordFile(dir), JSON.stringify({ username: "x" }));
    const error = await loadAuthRecord(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).code).toBe("auth.record_invalid");
    expect((error as CliError).message).toContain("matoolkit auth logout");
  });
});
