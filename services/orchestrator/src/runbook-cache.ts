import { getRunbookVersion, type Db } from "@matoolkit/db";
import { parseRunbookOrThrow, type RunbookDefinition } from "@matoolkit/domain";

/**
 * A published runbook version never changes, so its parsed definition can be cached for the life
 * of the process. Steps always follow the version that created them (rollbacks included).
 */
export class RunbookCache {
  readonly #cache = new Map<string, RunbookDefinition>();
  readonly #maxEntries: number;

  constructor(maxEntries = 200) {
    this.#maxEntries = maxEntries;
  }

  async get(db: Db, name: string, version: number): Promise<RunbookDefinition> {
    const key = `${name}@${version}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const row = await getRunbookVersion(db, name, version);
    if (row === undefined) throw new Error(`runbook ${name} version ${version} does not exist`);
    const definition = parseRunbookOrThrow(row.yamlContent);
    if (this.#cache.size >= this.#maxEntries) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.set(key, definition);
    return definition;
  }
}
