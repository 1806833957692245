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
 * ETag mismatch (409), Redis and PostgreSQL a plain store error that daprd answers with 500
 * ERR_STATE_SAVE / ERR_STATE_DELETE. A 500 is therefore checked against the stored item: if the
 * key is now there (or its ETag moved on) we lost the race; otherwise the error is real.
 */
const MAYBE_CONFLICT = 500;

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

  /** After a 500: did we lose an optimistic-concurrency race, or did the store fail? */
  const lostRace = async (key: string, expectedEtag: string | undefined): Promise<boolean> => {
    const current = await read(key);
    return expectedEtag === undefined ? current !== undefined : current?.etag !== expectedEtag;
  };

  const save = async (item: {
    key: string;
    value: unknown;
    etag?: string;
    firstWrite: boolean;
    ttlSeconds: number;
  }): Promise<boolean> => {
    const response = await http.request({
      method: "POST",
      path: `/v1.0/state/${store}`,
      operation: "state.save",
      accept: item.firstWrite ? [CONFLICT, MAYBE_CONFLICT] : [],
      json: [
        {
          key: item.key,
          value: item.value,
          ...(item.etag === undefined ? {} : { etag: item.etag }),
          options: { concurrency: item.firstWrite ? "first-write" : "last-write", consistency: "strong" },
          metadata: { ttlInSeconds: String(Math.max(1, Math.ceil(item.ttlSeconds))) },
        },
      ],
    });
    if (response.status === CONFLICT) return false;
    if (response.status === MAYBE_CONFLICT) {
      if (await lostRace(item.key, item.etag)) return false;
      throw new DaprApiError("state.save", response.status, "ERR_STATE_SAVE");
    }
    return true;
  };

  return {
    get: read,
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
