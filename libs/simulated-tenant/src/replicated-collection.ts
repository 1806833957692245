/**
 * A keyed collection with directory-style replication delay: every write is a new version on the
 * "primary", and reads served from a "replica" see a version only `delayMs` after it was written
 * (a write not yet replicated is invisible; a delete not yet replicated still shows the object).
 * This is how Entra ID and Exchange behave right after a create or update, and why the standard
 * functions must tolerate "not found" right after they, or a previous attempt, wrote something.
 */
interface Version<T> {
  readonly value: T | undefined;
  readonly writtenAt: number;
}

export type ReadView = "replica" | "primary";

/**
 * How a replica read picks among the versions written in the last `delayMs`:
 * - `settled`: none of them (one fixed lag, the same for every read);
 * - `flapping`: any of them or the last one before them, drawn at random for each read, because
 *   each read is served by whichever replica answers and replicas catch up independently: a read
 *   after a write may show the new value, then the old one, then the new one. Microsoft:
 *   "Microsoft Entra operates on top of a multi-region, multi-replica directory architecture ...
 *   Reads are served from nearby replicas for performance, while writes are replicated
 *   asynchronously" (https://devblogs.microsoft.com/identity/designing-for-eventual-consistency-for-microsoft-entra/).
 */
export type ReplicaReads = "settled" | "flapping";

export class ReplicatedCollection<T> {
  readonly #versions = new Map<string, Version<T>[]>();
  readonly #keyOf: (value: T) => string;
  readonly #delayMs: () => number;
  readonly #now: () => number;
  readonly #reads: () => ReplicaReads;
  readonly #random: () => number;

  constructor(options: {
    keyOf: (value: T) => string;
    delayMs: () => number;
    now: () => number;
    /** Default `settled`. */
    reads?: () => ReplicaReads;
    /** For `flapping`: which replica answers a read (default Math.random). */
    random?: () => number;
  }) {
    this.#keyOf = options.keyOf;
    this.#delayMs = options.delayMs;
    this.#now = options.now;
    this.#reads = options.reads ?? (() => "settled");
    this.#random = options.random ?? Math.random;
  }

  /**
   * When the object under `key` was created (its first version since it last did not exist), or
   * undefined when it does not exist on the primary.
   */
  createdAt(key: string): number | undefined {
    const versions = this.#versions.get(key);
    if (versions === undefined || versions.at(-1)?.value === undefined) return undefined;
    let index = versions.length - 1;
    while (index > 0 && versions[index - 1]!.value !== undefined) index--;
    return versions[index]!.writtenAt;
  }

  /** Replica view by default; pass "primary" for the latest write (uniqueness checks, writes). */
  get(key: string, view: ReadView = "replica"): T | undefined {
    const versions = this.#versions.get(key);
    if (versions === undefined) return undefined;
    return this.#pick(versions, view)?.value;
  }

  find(predicate: (value: T) => boolean, view: ReadView = "replica"): T | undefined {
    return this.list(view).find(predicate);
  }

  list(view: ReadView = "replica"): T[] {
    const values: T[] = [];
    for (const versions of this.#versions.values()) {
      const value = this.#pick(versions, view)?.value;
      if (value !== undefined) values.push(value);
    }
    return values;
  }

  /** Stores a new version (a deep copy, so callers cannot alter history by mutating). */
  put(value: T): void {
    const key = this.#keyOf(value);
    const versions = this.#versions.get(key) ?? [];
    versions.push({ value: structuredClone(value), writtenAt: this.#now() });
    this.#versions.set(key, versions);
  }

  delete(key: string): void {
    const versions = this.#versions.get(key);
    if (versions === undefined) return;
    versions.push({ value: undefined, writtenAt: this.#now() });
  }

  /** Seeding: stored as already replicated, so a freshly seeded tenant is consistent. */
  seed(value: T): void {
    this.#versions.set(this.#keyOf(value), [
      { value: structuredClone(value), writtenAt: Number.NEGATIVE_INFINITY },
    ]);
  }

  clear(): void {
    this.#versions.clear();
  }

  #pick(versions: readonly Version<T>[], view: ReadView): Version<T> | undefined {
    if (view === "primary") return cloneVersion(versions.at(-1));
    const visibleBefore = this.#now() - this.#delayMs();
    let settled = -1;
    for (let index = versions.length - 1; index >= 0; index--) {
      if (versions[index]!.writtenAt <= visibleBefore) {
        settled = index;
        break;
      }
    }
    const recent = versions.length - 1 - settled;
    if (recent > 0 && this.#reads() === "flapping") {
      // One of the recent versions, or the settled one (-1: not there yet), at random.
      const pick = settled + Math.floor(this.#random() * (recent + 1));
      return pick < 0 ? undefined : cloneVersion(versions[pick]);
    }
    return settled < 0 ? undefined : cloneVersion(versions[settled]);
  }
}

function cloneVersion<T>(version: Version<T> | undefined): Version<T> | undefined {
  if (version === undefined) return undefined;
  return {
    value: version.value === undefined ? undefined : structuredClone(version.value),
    writtenAt: version.writtenAt,
  };
}
