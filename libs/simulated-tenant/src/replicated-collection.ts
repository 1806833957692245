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

export class ReplicatedCollection<T> {
  readonly #versions = new Map<string, Version<T>[]>();
  readonly #keyOf: (value: T) => string;
  readonly #delayMs: () => number;
  readonly #now: () => number;

  constructor(options: { keyOf: (value: T) => string; delayMs: () => number; now: () => number }) {
    this.#keyOf = options.keyOf;
    this.#delayMs = options.delayMs;
    this.#now = options.now;
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
    for (let index = versions.length - 1; index >= 0; index--) {
      const version = versions[index]!;
      if (version.writtenAt <= visibleBefore) return cloneVersion(version);
    }
    return undefined;
  }
}

function cloneVersion<T>(version: Version<T> | undefined): Version<T> | undefined {
  if (version === undefined) return undefined;
  return {
    value: version.value === undefined ? undefined : structuredClone(version.value),
    writtenAt: version.writtenAt,
  };
}
