/**
 * The state-store behaviour behind `/v1.0/state`: one key space per component name, shared by all
 * sidecars of a broker (as a real Redis/PostgreSQL store would be), with Dapr's optimistic
 * concurrency rules as the imitated store applies them (`StateStoreKind`):
 * - `redis` (the default, components-contrib state.redis as the `local` profile runs it): the
 *   write rules of its Lua script, see `redisAccepts` below, including the `first-write` mark that
 *   makes a key claimed with first-write concurrency refuse every later save without its ETag;
 * - `postgresql-v2`, `dynamodb`: an ETag on a write/delete must match the stored one, otherwise an
 *   ETag mismatch (HTTP 409); `first-write` without an ETag only inserts, on an existing key it
 *   fails with a plain store error (daprd answers 500); without an ETag, last write wins.
 * A first-write conflict without ETag is a plain store error on all three; stores that map it to
 * an ETag mismatch (Cosmos DB, Azure Tables) give 409, which the caller may choose to emulate.
 * `ttlInSeconds` metadata expires a key (-1 keeps it forever); expired keys read as missing; what
 * else an expired key does depends on the store imitated.
 * Keys arrive already prefixed (`<appId>||<key>`); the ETag is an opaque version string.
 */

/**
 * How a key past its TTL behaves, per store (components-contrib):
 * - `redis`: gone at once (Redis expires the key itself);
 * - `postgresql-v2`: the row stays until the garbage collector runs (`sweepExpired()` here) but
 *   acts as absent: reads hide it, a first-write upserts over it, an ETag write does not match it
 *   (`... AND (expires_at IS NULL OR expires_at >= now())`); a delete still removes it;
 * - `dynamodb`: the item stays until DynamoDB's TTL sweep (hours to days; `sweepExpired()` here):
 *   reads hide it (Get checks the TTL attribute), but a first-write without ETag
 *   (`attribute_not_exists`) still fails on it with a plain error (500), while a write or delete
 *   whose ETag matches it succeeds (the ETag cannot be read, though).
 */
export type StateStoreKind = "redis" | "postgresql-v2" | "dynamodb";

export interface StoredItem {
  /** The value as daprd stores it: the JSON encoding of the request's `value`. */
  readonly json: string;
  readonly etag: string;
  readonly expiresAt: Date | undefined;
  /**
   * `redis` only: the hash's `first-write` field, set by a save with first-write concurrency and
   * kept by every later write of the key until it is deleted or expires.
   */
  readonly firstWriteMark: boolean;
}

export type StateConcurrency = "first-write" | "last-write";

export interface SetOperation {
  readonly kind: "set";
  readonly key: string;
  readonly value: unknown;
  readonly etag: string | undefined;
  /** `options.concurrency` as the request gave it (undefined when absent). */
  readonly concurrency: StateConcurrency | undefined;
  /**
   * Part of a transaction: state.redis's `Multi` runs the same script without its third
   * argument, so a transactional first-write does not set the mark (it still honours one).
   */
  readonly inTransaction: boolean;
  readonly metadata: Readonly<Record<string, string>>;
}

export interface DeleteOperation {
  readonly kind: "delete";
  readonly key: string;
  readonly etag: string | undefined;
}

export type StateOperation = SetOperation | DeleteOperation;

/** `timeout`: the store call outlived daprd's timeout (it may have committed). */
export type StateErrorKind = "etag-mismatch" | "first-write-conflict" | "invalid-metadata" | "timeout";

export class StateError extends Error {
  constructor(
    readonly kind: StateErrorKind,
    readonly key: string,
    message: string,
  ) {
    super(message);
    this.name = "StateError";
  }
}

export class StateBackend {
  private readonly stores = new Map<string, Map<string, StoredItem>>();
  private version = 0;

  constructor(
    private readonly now: () => Date = () => new Date(),
    private readonly kind: StateStoreKind = "redis",
  ) {}

  get(store: string, key: string): StoredItem | undefined {
    return this.live(this.items(store), key);
  }

  /** The store's own expiry sweep (PostgreSQL's garbage collector, DynamoDB's TTL process). */
  sweepExpired(): void {
    for (const items of this.stores.values()) {
      for (const [key, item] of items) if (this.expired(item)) items.delete(key);
    }
  }

  /** Applies the operations in order, all or nothing (a single operation is the non-transactional case). */
  apply(store: string, operations: readonly StateOperation[]): void {
    const items = this.items(store);
    const staged = new Map<string, StoredItem | undefined>();
    // What a write's conditions see: DynamoDB's conditions see an expired, unswept item; an ETag
    // update on PostgreSQL v2 does not (see StateStoreKind).
    const current = (key: string, operation: StateOperation): StoredItem | undefined => {
      if (staged.has(key)) return staged.get(key);
      const stored = this.stored(items, key);
      if (stored === undefined || !this.expired(stored)) return stored;
      if (this.kind === "dynamodb") return stored;
      if (this.kind === "postgresql-v2" && operation.kind === "delete") return stored;
      return undefined;
    };

    for (const operation of operations) {
      const existing = current(operation.key, operation);
      if (operation.kind === "set" && this.kind === "redis") {
        staged.set(operation.key, this.redisSet(operation, existing));
        continue;
      }
      if (operation.etag !== undefined && operation.etag !== "" && existing?.etag !== operation.etag) {
        throw etagMismatch(operation.key);
      }
      switch (operation.kind) {
        case "set":
          if (
            operation.concurrency === "first-write" &&
            (operation.etag ?? "") === "" &&
            existing !== undefined
          ) {
            throw new StateError(
              "first-write-conflict",
              operation.key,
              `no item was updated: key ${operation.key} already exists (first-write)`,
            );
          }
          staged.set(operation.key, {
            json: JSON.stringify(operation.value ?? null),
            etag: String(++this.version),
            expiresAt: this.expiryFrom(operation),
            firstWriteMark: false,
          });
          break;
        case "delete":
          staged.set(operation.key, undefined);
          break;
        default:
          assertNever(operation);
      }
    }

    for (const [key, item] of staged) {
      if (item === undefined) items.delete(key);
      else items.set(key, item);
    }
  }

  /** Every live key of a store, for test assertions. */
  entries(store: string): ReadonlyMap<string, StoredItem> {
    const items = this.items(store);
    const live = new Map<string, StoredItem>();
    for (const key of items.keys()) {
      const item = this.live(items, key);
      if (item !== undefined) live.set(key, item);
    }
    return live;
  }

  /**
   * A save as components-contrib state.redis runs it (state/redis/redis.go, the same in the
   * v1.16.x and v1.18.x releases daprd 1.16.5 and 1.18.1 pin): `parseETag` turns the request into
   * a version, "0" when the concurrency is `last-write` or there is no ETag, else the ETag; then
   * `setDefaultQuery` writes only if the key has no version yet (absent), or the version matches,
   * or the key has no `first-write` field and the version is "0". A save with first-write
   * concurrency sets that field (`ARGV[3] == "0"`), and nothing clears it, so a key once saved
   * with first-write refuses every later save without its ETag, `last-write` included (which
   * drops the ETag, so it cannot overwrite a marked key at all). `Set` reports a refusal as an
   * ETag mismatch when the request carried an ETag (daprd: 409), else as a plain error (daprd:
   * 500 ERR_STATE_SAVE).
   */
  private redisSet(operation: SetOperation, existing: StoredItem | undefined): StoredItem {
    const etag = operation.etag ?? "";
    const version = operation.concurrency === "last-write" || etag === "" ? "0" : etag;
    const accepted =
      existing === undefined || existing.etag === version || (!existing.firstWriteMark && version === "0");
    if (!accepted) {
      if (etag !== "") throw etagMismatch(operation.key);
      throw new StateError(
        "first-write-conflict",
        operation.key,
        `failed to set key ${operation.key}: ERR Error running script: failed to set key ${operation.key}`,
      );
    }
    return {
      json: JSON.stringify(operation.value ?? null),
      etag: String(++this.version),
      expiresAt: this.expiryFrom(operation),
      firstWriteMark:
        (existing?.firstWriteMark ?? false) ||
        (operation.concurrency === "first-write" && !operation.inTransaction),
    };
  }

  private expiryFrom(operation: SetOperation): Date | undefined {
    const raw = operation.metadata.ttlInSeconds;
    if (raw === undefined || raw === "") return undefined;
    const seconds = Number(raw);
    if (!Number.isInteger(seconds) || seconds < -1) {
      throw new StateError(
        "invalid-metadata",
        operation.key,
        `failed to parse ttlInSeconds "${raw}": expected an integer >= -1`,
      );
    }
    return seconds > 0 ? new Date(this.now().getTime() + seconds * 1000) : undefined;
  }

  private items(store: string): Map<string, StoredItem> {
    let items = this.stores.get(store);
    if (items === undefined) {
      items = new Map();
      this.stores.set(store, items);
    }
    return items;
  }

  /** What a read sees: nothing past its TTL (Redis drops it then; the others keep it unswept). */
  private live(items: Map<string, StoredItem>, key: string): StoredItem | undefined {
    const item = this.stored(items, key);
    return item === undefined || this.expired(item) ? undefined : item;
  }

  /** What the store physically holds. */
  private stored(items: Map<string, StoredItem>, key: string): StoredItem | undefined {
    const item = items.get(key);
    if (item !== undefined && this.kind === "redis" && this.expired(item)) {
      items.delete(key);
      return undefined;
    }
    return item;
  }

  private expired(item: StoredItem): boolean {
    return item.expiresAt !== undefined && item.expiresAt.getTime() <= this.now().getTime();
  }
}

function etagMismatch(key: string): StateError {
  return new StateError(
    "etag-mismatch",
    key,
    `possible etag mismatch. error from state store: the etag for key ${key} does not match`,
  );
}

function assertNever(value: never): never {
  throw new Error(`unexpected state operation ${JSON.stringify(value)}`);
}
