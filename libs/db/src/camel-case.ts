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
}

/** Result rows of raw SQL (snake_case keys) as the camelCase row types; nested values untouched. */
export function camelCaseRows<T>(rows: readonly Record<string, unknown>[]): T[] {
  return rows.map(
    (row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [snakeToCamel(key), value])) as T,
  );
}

/** camelCase keys of the repositories' APIs → snake_case column names for raw SQL. */
export function toColumnNames(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [camelToSnake(key), value]));
}

function snakeToCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

export function camelToSnake(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
