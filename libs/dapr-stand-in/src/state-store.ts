/**
 * The state-store behaviour behind `/v1.0/state`: one key space per component name, shared by all
 * sidecars of a broker (as a real Redis/PostgreSQL store would be), with Dapr's optimistic
 * concurrency rules:
 * - an ETag on a write/delete must match the stored one, otherwise an ETag mismatch (HTTP 409);
 * - `first-write` without an ETag only inserts; on an existing, unexpired key it fails. Redis and
 *   PostgreSQL report that as a plain store error (daprd answers 500), stores that map it to an
 *   ETag mismatch (Cosmos DB, Azure Tables) give 409; the caller decides which to emulate;
 * - without an ETag, last write wins;
 * - `ttlInSeconds` metadata expires a key (-1 keeps it forever); expired keys read as missing.
 *   What else an expired key does depends on the store imitated (`StateStoreKind`).
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
}

export interface SetOperation {
  readonly kind: "set";
  readonly key: string;
  readonly value: unknown;
  readonly etag: string | undefined;
  readonly firstWrite: boolean;
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
      if (operation.etag !== undefined && operation.etag !== "" && existing?.etag !== operation.etag) {
        throw new StateError(
          "etag-mismatch",
          operation.key,
          `possible etag mismatch. error from state store: the etag for key ${operation.key} does not match`,
        );
      }
      switch (operation.kind) {
        case "set":
          if (operation.firstWrite && (operation.etag ?? "") === "" && existing !== undefined) {
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

function assertNever(value: never): never {
  throw new Error(`unexpected state operation ${JSON.stringify(value)}`);
}
