import { createLocalJWKSet, errors } from "jose";
import type { JSONWebKeySet, JWTVerifyGetKey } from "jose";
import { z } from "zod";
import { KeySourceUnavailableError } from "./auth-error.ts";

// Only what we rely on; Entra's keys carry more (x5t, x5c, issuer…), passed through to jose.
const jwksSchema = z.object({
  keys: z.array(z.looseObject({ kty: z.string().min(1), kid: z.string().min(1).optional() })).min(1),
});

export interface JwksRefreshFailure {
  readonly jwksUrl: string;
  /** Why the fetch failed (status, network error, bad body); never contains a token. */
  readonly reason: string;
  /** True when earlier keys are still used; false means requests answer 503 until a fetch works. */
  readonly servingCachedKeys: boolean;
}

export interface JwksCacheOptions {
  readonly url: URL;
  /** How long fetched keys are used before a refetch; Microsoft advises checking about daily. */
  readonly maxAgeMs?: number;
  /** Least time between two fetches, so unknown (e.g. forged) kids or an outage cannot hammer the endpoint. */
  readonly cooldownMs?: number;
  readonly timeoutMs?: number;
  /** Milliseconds since the epoch; tests move it instead of sleeping. */
  readonly now?: () => number;
  readonly onRefreshFailure: (failure: JwksRefreshFailure) => void;
}

const day = 24 * 60 * 60 * 1000;

/**
 * A key lookup for jwtVerify over a remote JWKS that keeps the last good keys: a failed refresh
 * is reported and retried after the cooldown, and only a cache that never got keys fails requests
 * (with {@link KeySourceUnavailableError}). An unknown kid triggers a refetch, as keys rotate.
 */
export function createJwksCache(options: JwksCacheOptions): JWTVerifyGetKey {
  const { url, maxAgeMs = day, cooldownMs = 60_000, timeoutMs = 5_000, now = Date.now } = options;
  let cached: { readonly getKey: JWTVerifyGetKey; readonly fetchedAt: number } | undefined;
  let lastAttemptAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | undefined;

  const coolingDown = () => now() - lastAttemptAt < cooldownMs;
  // Concurrent callers share one fetch.
  const refresh = () =>
    (inFlight ??= fetchKeys().finally(() => {
      inFlight = undefined;
    }));

  async function fetchKeys(): Promise<void> {
    lastAttemptAt = now();
    try {
      const getKey = createLocalJWKSet(await fetchJwks(url, timeoutMs));
      cached = { getKey, fetchedAt: now() };
    } catch (error) {
      options.onRefreshFailure({
        jwksUrl: url.href,
        reason: reasonOf(error),
        servingCachedKeys: cached !== undefined,
      });
    }
  }

  function current() {
    if (cached === undefined) throw new KeySourceUnavailableError();
    return cached;
  }

  return async (header, token) => {
    const stale = cached === undefined || now() - cached.fetchedAt >= maxAgeMs;
    if (stale && !coolingDown()) await refresh();
    else if (cached === undefined && inFlight !== undefined) await inFlight;
    try {
      return await current().getKey(header, token);
    } catch (error) {
      // A kid we do not know may be a key Entra has just started to use: look once, then give up.
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      if (inFlight === undefined && coolingDown()) throw error;
      await refresh();
      return current().getKey(header, token);
    }
  };
}

async function fetchJwks(url: URL, timeoutMs: number): Promise<JSONWebKeySet> {
  const response = await fetch(url, {
    headers: { accept: "application/json" },
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!response.ok) {
    await response.body?.cancel(); // frees the connection; the error body is of no use
    throw new Error(`the JWKS endpoint answered HTTP ${response.status}`);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new Error("the JWKS endpoint answered something other than JSON");
  }
  const parsed = jwksSchema.safeParse(body);
  if (!parsed.success) throw new Error("the JWKS endpoint answered JSON that is not a non-empty key set");
  return parsed.data as JSONWebKeySet;
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // fetch() reports network failures as "fetch failed" with the reason (ECONNREFUSED…) in `cause`.
  const cause =
    error.cause instanceof Error ? `: ${(error.cause as { code?: string }).code ?? error.cause.message}` : "";
  return `${error.message}${cause}`;
}
