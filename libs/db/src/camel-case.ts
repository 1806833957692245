import {
  CamelCasePlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryId,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from "kysely";

/**
 * The naming rule of the Db: the query builder speaks camelCase (tables, columns, result keys;
 * `db.selectFrom("batchMembers").select("memberKey")`), raw `sql` speaks SQL — its result keys come
 * back exactly as the statement names them (snake_case). Raw SQL is left alone because other code
 * shares the Db for statements written against the real column names (the runtime's outbox relay
 * and idempotency store, pg-boss through `db.executeQuery`). jsonb contents are data (member
 * attributes, worker output), so nested keys are never renamed.
 */
export class QueryBuilderCamelCasePlugin extends CamelCasePlugin {
  readonly #builderQueries = new WeakSet<QueryId>();

  constructor() {
    super({ maintainNestedObjectKeys: true });
  }

  override transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind !== "RawNode") this.#builderQueries.add(args.queryId);
    return super.transformQuery(args);
  }

  override async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return this.#builderQueries.has(args.queryId) ? super.transformResult(args) : args.result;
  }

  // Kysely's own mappers, remembered: it converts every key of every row and every identifier of
  // every query, and the names are the schema's few hundred.
  readonly #camelOfSnake = new Map<string, string>();
  readonly #snakeOfCamel = new Map<string, string>();

  protected override camelCase(name: string): string {
    return remembered(this.#camelOfSnake, name, (snake) => super.camelCase(snake));
  }

  protected override snakeCase(name: string): string {
    return remembered(this.#snakeOfCamel, name, (camel) => super.snakeCase(camel));
  }
}

/**
 * Result rows of raw SQL (snake_case keys) as the camelCase row types; nested values untouched.
 * On the hot path (a step row has 34 columns, and progression reads whole chains of them): a plain
 * loop over keys converted once each, not entries arrays and a regex per key per row.
 */
export function camelCaseRows<T>(rows: readonly Record<string, unknown>[]): T[] {
  const result: T[] = new Array<T>(rows.length);
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index]!;
    const converted: Record<string, unknown> = {};
    for (const key in row) converted[snakeToCamel(key)] = row[key];
    result[index] = converted as T;
  }
  return result;
}

/** camelCase keys of the repositories' APIs → snake_case column names for raw SQL. */
export function toColumnNames(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [camelToSnake(key), value]));
}

/**
 * Names seen so far, both ways. Column and property names are a small, fixed set (the schema's),
 * so the maps stay small; the bound only guards against a caller converting data keys by mistake.
 */
const camelOfSnake = new Map<string, string>();
const snakeOfCamel = new Map<string, string>();
const maxRememberedNames = 4096;

function remembered(cache: Map<string, string>, name: string, convert: (name: string) => string): string {
  let converted = cache.get(name);
  if (converted === undefined) {
    converted = convert(name);
    if (cache.size < maxRememberedNames) cache.set(name, converted);
  }
  return converted;
}

export function snakeToCamel(name: string): string {
  return remembered(camelOfSnake, name, (snake) =>
    snake.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase()),
  );
}

export function camelToSnake(name: string): string {
  return remembered(snakeOfCamel, name, (camel) =>
    camel.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`),
  );
}
