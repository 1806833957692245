import path from "node:path";
import { readIfPresent, writePrivateFile } from "../../private-files.ts";

/**
 * The slice of MSAL's `ICachePlugin` / `TokenCacheContext` (@azure/msal-node) this cache uses:
 * MSAL calls `beforeCacheAccess` before it reads its cache and `afterCacheAccess` after, so
 * every process sees the tokens the last one stored.
 */
export interface TokenCacheContextLike {
  readonly cacheHasChanged: boolean;
  readonly tokenCache: { serialize(): string; deserialize(cache: string): void };
}

export interface CachePluginLike {
  beforeCacheAccess(context: TokenCacheContextLike): Promise<void>;
  afterCacheAccess(context: TokenCacheContextLike): Promise<void>;
}

/**
 * The name @azure/identity passes: it means to suffix `.nocae`/`.cae` per token kind, but its
 * spread of our options overrides that (4.x), so the file is `matoolkit-cli.cache.json`, 000's name.
 */
const cacheNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function tokenCacheFile(stateDir: string, name: string): string {
  if (!cacheNamePattern.test(name)) throw new Error(`Unusable token cache name '${name}'`);
  return path.join(stateDir, `${name}.cache.json`);
}

/**
 * MSAL's token cache (refresh and access tokens of the signed-in account) in a file readable by
 * its owner only, in a 0700 directory: what Azure CLI does on Linux without a keyring. The OS
 * credential store of 000 (Keychain, DPAPI, libsecret) needs @azure/identity-cache-persistence,
 * whose native keytar build is not available here.
 */
export function fileTokenCachePlugin(file: string): CachePluginLike {
  return {
    async beforeCacheAccess(context) {
      const text = await readIfPresent(file);
      if (text === undefined) return;
      try {
        context.tokenCache.deserialize(text);
      } catch {
        // A damaged cache only costs a new sign-in; the next write replaces it.
      }
    },
    async afterCacheAccess(context) {
      if (context.cacheHasChanged) await writePrivateFile(file, context.tokenCache.serialize());
    },
  };
}

/** The persistence factory @azure/identity's `cachePluginControl.setPersistence` expects. */
export function fileCachePersistence(
  stateDir: string,
): (options?: { readonly name?: string }) => Promise<CachePluginLike> {
  return async (options) => fileTokenCachePlugin(tokenCacheFile(stateDir, options?.name ?? "matoolkit-cli"));
}
