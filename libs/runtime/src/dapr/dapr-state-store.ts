import { randomUUID } from "node:crypto";
import type { Logger } from "../logger.ts";
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
 *
 * Expiry is logical: every value is stored in an envelope carrying `expiresAt` (the caller's
 * `ttlSeconds`), and an envelope past it reads as absent and is taken over by `create`. Dapr's
 * own TTL is only the physical clean-up, set later (`physicalGraceSeconds`), because stores differ
 * in what an expired item does: DynamoDB hides it from reads but still fails a first-write on it
 * until its sweep runs (hours to days), with an ETag nobody can read (issue 14, finding 2).
 */
export interface DaprStateStore {
  /** Undefined when the key is absent or its `ttlSeconds` ran out (logically expired). */
  get<T>(key: string): Promise<StoredState<T> | undefined>;
  /**
   * Writes only if the key is absent or holds an expired entry (taken over by its ETag: of
   * several creators only one wins). A key refused by an item the store hides is reported lost.
   */
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

/**
 * Default time Dapr keeps an entry after its logical expiry: the topics' message TTL (7 days).
 * A key the system can still re-create (a message id redelivered, a retried job, a timer lease)
 * stays readable, with its ETag, for as long as anything can ask for it again, so a store that
 * hides expired items while they still block first-writes (DynamoDB) never blocks one of ours.
 */
export const DEFAULT_PHYSICAL_GRACE_SECONDS = 7 * 24 * 60 * 60;

/** How a value is stored: the caller's value, its logical expiry, and who wrote it. */
interface Envelope {
  readonly envelope: 1;
  readonly value: unknown;
  /** Logical expiry, ms since the epoch: from then on the entry reads as absent. */
  readonly expiresAt: number;
  readonly claimToken: string;
}

interface RawEntry {
  readonly value: unknown;
  readonly etag: string;
  /** Undefined for an entry written before envelopes (its Dapr TTL is its only expiry). */
  readonly expiresAt: number | undefined;
  readonly claimToken: unknown;
}

const LEGACY_TOKEN_FIELD = "claimToken";

function isEnvelope(stored: unknown): stored is Envelope {
  return (
    typeof stored === "object" &&
    stored !== null &&
    (stored as Partial<Envelope>).envelope === 1 &&
    typeof (stored as Partial<Envelope>).expiresAt === "number" &&
    "value" in stored
  );
}

/** Reads an envelope, or a bare value stored before envelopes (with its token, if any, removed). */
function unwrap(stored: unknown, etag: string): RawEntry {
  if (isEnvelope(stored)) {
    return { value: stored.value, etag, expiresAt: stored.expiresAt, claimToken: stored.claimToken };
  }
  if (typeof stored !== "object" || stored === null || !(LEGACY_TOKEN_FIELD in stored)) {
    return { value: stored, etag, expiresAt: undefined, claimToken: undefined };
  }
  const { [LEGACY_TOKEN_FIELD]: claimToken, ...rest } = stored as Record<string, unknown>;
  return { value: rest, etag, expiresAt: undefined, claimToken };
}

export interface DaprStateStoreOptions {
  /** Added to every TTL for Dapr's `ttlInSeconds` (see DEFAULT_PHYSICAL_GRACE_SECONDS). */
  readonly physicalGraceSeconds?: number;
  /** Warns about keys blocked by an item the store hides (`state.key_blocked`). */
  readonly logger?: Logger;
  /** Clock of the logical expiry, ms since the epoch (tests). */
  readonly now?: () => number;
}

/** Conditional writes a `put` tries before it gives up on a key that keeps changing under it. */
const MAX_PUT_ATTEMPTS = 5;

/** Bound on the keys remembered as already warned about. */
const MAX_WARNED_KEYS = 1000;

export function createDaprStateStore(
  http: DaprHttp,
  storeName: string,
  options: DaprStateStoreOptions = {},
): DaprStateStore {
  const store = encodeURIComponent(storeName);
  const path = (key: string) => `/v1.0/state/${store}/${encodeURIComponent(key)}`;
  const graceSeconds = options.physicalGraceSeconds ?? DEFAULT_PHYSICAL_GRACE_SECONDS;
  const now = options.now ?? Date.now;
  const { logger } = options;
  const warnedKeys = new Set<string>();

  const expired = (entry: RawEntry): boolean => entry.expiresAt !== undefined && entry.expiresAt <= now();

  /** What the store shows, logically expired or not (Dapr keeps it readable for the grace). */
  const readRaw = async (key: string): Promise<RawEntry | undefined> => {
    const response = await http.request({
      method: "GET",
      path: path(key),
      operation: "state.get",
      query: { consistency: "strong" },
    });
    // 204 No Content: the key does not exist (or the store's own TTL hides it).
    if (response.status === 204) return undefined;
    const text = await response.text();
    if (text === "") return undefined;
    return unwrap(JSON.parse(text) as unknown, response.headers.get("etag") ?? "");
  };

  const get = async <T>(key: string): Promise<StoredState<T> | undefined> => {
    const entry = await readRaw(key);
    return entry === undefined || expired(entry) ? undefined : { value: entry.value as T, etag: entry.etag };
  };

  const save = async (item: {
    key: string;
    value: unknown;
    etag?: string;
    firstWrite: boolean;
    ttlSeconds: number;
  }): Promise<{ won: boolean; status: number; current?: RawEntry | undefined }> => {
    const claimToken = randomUUID();
    const envelope: Envelope = {
      envelope: 1,
      value: item.value,
      expiresAt: now() + item.ttlSeconds * 1000,
      claimToken,
    };
    const response = await http.request({
      method: "POST",
      path: `/v1.0/state/${store}`,
      operation: "state.save",
      accept: item.firstWrite ? [CONFLICT, MAYBE_CONFLICT] : [],
      json: [
        {
          key: item.key,
          value: envelope,
          ...(item.etag === undefined ? {} : { etag: item.etag }),
          options: { concurrency: item.firstWrite ? "first-write" : "last-write", consistency: "strong" },
          metadata: { ttlInSeconds: String(Math.max(1, Math.ceil(item.ttlSeconds + graceSeconds))) },
        },
      ],
    });
    if (response.ok) return { won: true, status: response.status };
    // Not a success: decided by what is stored now (see MAYBE_CONFLICT).
    const current = await readRaw(item.key);
    return { won: current?.claimToken === claimToken, status: response.status, current };
  };

  /** Writes only if the key still has `etag`: true if we won, false if we lost, else throws. */
  const replace = async (key: string, value: unknown, etag: string, ttlSeconds: number): Promise<boolean> => {
    const outcome = await save({ key, value, etag, firstWrite: true, ttlSeconds });
    if (outcome.won) return true;
    if (outcome.status === CONFLICT || outcome.current?.etag !== etag) return false;
    throw new DaprApiError("state.save", outcome.status, "ERR_STATE_SAVE");
  };

  const warnBlocked = (key: string): void => {
    if (warnedKeys.has(key)) return;
    if (warnedKeys.size >= MAX_WARNED_KEYS) warnedKeys.clear();
    warnedKeys.add(key);
    // Keys name timers, topics, subscriptions and message/job ids: no member data.
    logger?.warn(
      { reason: "state.key_blocked", key, store: storeName },
      "first write refused on a key that reads as absent; treated as taken",
    );
  };

  const create = async (key: string, value: unknown, ttlSeconds: number): Promise<boolean> => {
    const outcome = await save({ key, value, firstWrite: true, ttlSeconds });
    if (outcome.won) return true;
    const { current } = outcome;
    if (current === undefined) {
      // Nothing visible refused us: a lost race whose winner already deleted, or an item the store
      // hides but still holds (DynamoDB past its TTL, only possible beyond the physical grace).
      // Either way nothing conditional can reach it: lost, never an unconditional write.
      if (outcome.status === MAYBE_CONFLICT) warnBlocked(key);
      return false;
    }
    if (!expired(current)) return false;
    // Logically expired, still stored with its ETag: take it over. Of several takers only one
    // can match the ETag; the others lose.
    return replace(key, value, current.etag, ttlSeconds);
  };

  /**
   * Last-write-wins, spelled as conditional writes. A plain last-write without an ETag is not
   * portable: components-contrib's state.redis marks a key written with first-write concurrency,
   * and a later write of that key without a matching ETag fails (500 ERR_STATE_SAVE), which is
   * exactly how the delivery ledger and the idempotency store use a key (claim, then record).
   * So: read, then create if absent or replace on the ETag read; a race lost to another writer
   * is tried again, since whoever wrote last wins anyway.
   */
  const put = async (key: string, value: unknown, ttlSeconds: number): Promise<void> => {
    for (let attempt = 1; ; attempt += 1) {
      const current = await readRaw(key);
      const won =
        current === undefined
          ? await create(key, value, ttlSeconds)
          : await replace(key, value, current.etag, ttlSeconds);
      if (won) return;
      if (attempt >= MAX_PUT_ATTEMPTS) {
        throw new DaprApiError("state.save", CONFLICT, "ERR_STATE_SAVE");
      }
    }
  };

  return {
    get,
    create,
    replace,
    put,
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
        // After a 500: did we lose the ETag race, or did the store fail?
        if ((await readRaw(key))?.etag !== etag) return false;
        throw new DaprApiError("state.delete", response.status, "ERR_STATE_DELETE");
      }
      return true;
    },
  };
}
