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
 * Keys arrive already prefixed (`<appId>||<key>`); the ETag is an opaque version string.
 */

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

  constructor(private readonly now: () => Date = () => new Date()) {}

  get(store: string, key: string): StoredItem | undefined {
    return this.live(this.items(store), key);
  }

  /** Applies the operations in order, all or nothing (a single operation is the non-transactional case). */
  apply(store: string, operations: readonly StateOperation[]): void {
    const items = this.items(store);
    const staged = new Map<string, StoredItem | undefined>();
    const current = (key: string): StoredItem | undefined =>
      staged.has(key) ? staged.get(key) : this.live(items, key);

    for (const operation of operations) {
      const existing = current(operation.key);
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

  private live(items: Map<string, StoredItem>, key: string): StoredItem | undefined {
    const item = items.get(key);
    if (item?.expiresAt !== undefined && item.expiresAt.getTime() <= this.now().getTime()) {
      items.delete(key);
      return undefined;
    }
    return item;
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected state operation ${JSON.stringify(value)}`);
}
