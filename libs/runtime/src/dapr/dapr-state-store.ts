import { randomUUID } from "node:crypto";
import { DaprApiError, type DaprHttp } from "./dapr-http.ts";

export interface StoredState<T> {
  readonly value: T;
  readonly etag: string;
}

/**
 * The state API calls the idempotency store and the delivery ledger need, with Dapr's optimistic
 * concurrency spelled out: a write with `first-write` concurrency and no ETag succeeds only if the
 * key does not exist; with an ETag only if the stored ETag still matches. A lost race answers
 * 409 Conflict, which is reported as `false`, never thrown.
 */
export interface DaprStateStore {
  get<T>(key: string): Promise<StoredState<T> | undefined>;
  /** Writes only if the key is absent. */
  create(key: string, value: unknown, ttlSeconds: number): Promise<boolean>;
  /** Writes only if the key still has `etag`. */
  replace(key: string, value: unknown, etag: string, ttlSeconds: number): Promise<boolean>;
  /** Writes whatever is there (last-write-wins). */
  put(key: string, value: unknown, ttlSeconds: number): Promise<void>;
  /** Deletes; with an ETag only if it still matches. Returns false on a lost race. */
  delete(key: string, etag?: string): Promise<boolean>;
}

const CONFLICT = 409;
/**
 * Stores differ in how they report a lost first-write race: Cosmos DB and Azure Tables give an
 * ETag mismatch (409), Redis, PostgreSQL v2 and DynamoDB a plain store error that daprd answers
 * with 500 ERR_STATE_SAVE / ERR_STATE_DELETE (after retrying it under the state store's outbound
 * resiliency policy, which is why that policy is kept short). Neither answer proves we lost: a
 * write that committed but whose answer timed out comes back the same way (the timeout, or
 * daprd's retry hitting our own write). Every conditional write therefore carries a unique
 * `claimToken`, and after a non-success the stored item is read back: our token means we won.
 */
const MAYBE_CONFLICT = 500;
const TOKEN_FIELD = "claimToken";

/** Adds our token to an object value (the only kind our callers write conditionally). */
function withToken(value: unknown, token: string): unknown {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? { ...value, [TOKEN_FIELD]: token }
    : value;
}

function tokenOf(value: unknown): unknown {
  return typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)[TOKEN_FIELD]
    : undefined;
}

function withoutToken<T>(value: T): T {
  if (typeof value !== "object" || value === null || !(TOKEN_FIELD in value)) return value;
  const { [TOKEN_FIELD]: _token, ...rest } = value as Record<string, unknown>;
  return rest as T;
}

export function createDaprStateStore(http: DaprHttp, storeName: string): DaprStateStore {
  const store = encodeURIComponent(storeName);
  const path = (key: string) => `/v1.0/state/${store}/${encodeURIComponent(key)}`;

  const read = async <T>(key: string): Promise<StoredState<T> | undefined> => {
    const response = await http.request({
      method: "GET",
      path: path(key),
      operation: "state.get",
      query: { consistency: "strong" },
    });
    // 204 No Content: the key does not exist (or its TTL ran out).
    if (response.status === 204) return undefined;
    const text = await response.text();
    if (text === "") return undefined;
    return { value: JSON.parse(text) as T, etag: response.headers.get("etag") ?? "" };
  };

  const readWithoutToken = async <T>(key: string): Promise<StoredState<T> | undefined> => {
    const found = await read<T>(key);
    return found === undefined ? undefined : { value: withoutToken(found.value), etag: found.etag };
  };

  const save = async (item: {
    key: string;
    value: unknown;
    etag?: string;
    firstWrite: boolean;
    ttlSeconds: number;
  }): Promise<boolean> => {
    const token = randomUUID();
    const response = await http.request({
      method: "POST",
      path: `/v1.0/state/${store}`,
      operation: "state.save",
      accept: item.firstWrite ? [CONFLICT, MAYBE_CONFLICT] : [],
      json: [
        {
          key: item.key,
          value: item.firstWrite ? withToken(item.value, token) : item.value,
          ...(item.etag === undefined ? {} : { etag: item.etag }),
          options: { concurrency: item.firstWrite ? "first-write" : "last-write", consistency: "strong" },
          metadata: { ttlInSeconds: String(Math.max(1, Math.ceil(item.ttlSeconds))) },
        },
      ],
    });
    if (response.ok) return true;
    // Not a success: decided by what is stored now (see MAYBE_CONFLICT).
    const current = await read(item.key);
    if (current !== undefined && tokenOf(current.value) === token) return true;
    if (response.status === CONFLICT) return false;
    const lost = item.etag === undefined ? current !== undefined : current?.etag !== item.etag;
    if (lost) return false;
    throw new DaprApiError("state.save", response.status, "ERR_STATE_SAVE");
  };

  /** After a 500 on a delete: did we lose an ETag race, or did the store fail? */
  const lostRace = async (key: string, expectedEtag: string | undefined): Promise<boolean> => {
    const current = await read(key);
    return expectedEtag === undefined ? current !== undefined : current?.etag !== expectedEtag;
  };

  return {
    get: readWithoutToken,
    create: (key, value, ttlSeconds) => save({ key, value, firstWrite: true, ttlSeconds }),
    replace: (key, value, etag, ttlSeconds) => save({ key, value, etag, firstWrite: true, ttlSeconds }),
    put: async (key, value, ttlSeconds) => void (await save({ key, value, firstWrite: false, ttlSeconds })),
    async delete(key, etag) {
      const response = await http.request({
        method: "DELETE",
        path: path(key),
        operation: "state.delete",
        ...(etag === undefined
          ? {}
          : {
              headers: { "if-match": etag },
              query: { concurrency: "first-write" },
              accept: [CONFLICT, MAYBE_CONFLICT],
            }),
      });
      if (response.status === CONFLICT) return false;
      if (response.status === MAYBE_CONFLICT) {
        if (await lostRace(key, etag)) return false;
        throw new DaprApiError("state.delete", response.status, "ERR_STATE_DELETE");
      }
      return true;
    },
  };
}
