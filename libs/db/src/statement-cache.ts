import { createHash } from "node:crypto";
import pg from "pg";

/**
 * Server-side prepared statements for the statements a connection sends again and again
 * (issue 29), as pgjdbc (`prepareThreshold`) and pgx (its statement cache) do by default.
 *
 * Why: node-pg sends every parameterised statement as an unnamed one, so PostgreSQL parses,
 * analyses and plans it at every execution. Profiled on bench:orchestrator (`perf record` of
 * the server, 2,000 × 5 steps) that was about 38 % of the server's CPU, about as much as
 * executing them. A named statement is parsed once per connection, and once PostgreSQL's plan
 * cache settles on a generic plan (after five executions, `plan_cache_mode = auto`) it is not
 * planned again either.
 *
 * What gets prepared: a statement with parameters (node-pg sends those with the extended
 * protocol anyway; one without, such as `begin` or a migration's several statements, keeps the
 * simple protocol) from its `threshold`-th use on a connection, while the connection holds fewer
 * than `capacity` of ours (a cap rather than eviction: PostgreSQL forgets them when the pool
 * closes the idle connection). The name is a hash of the text, so a text is one statement.
 *
 * The one hazard of a prepared statement, a schema change under it (`ALTER TABLE … ADD COLUMN`
 * under a `SELECT *`: "cached plan must not change result type", SQLSTATE 0A000; or the
 * statement gone after `DEALLOCATE`/`DISCARD`, 26000): the connection forgets the statement and
 * prepares it afresh under a new name at its next use. A statement sent outside a transaction
 * block is retried at once that way (it changed nothing); inside one the error stands, as any
 * error does there: the transaction is rolled back and its caller (a delivery, a request)
 * tries again.
 *
 * Off (`prepareStatements: false` in DatabaseOptions) for a transaction-pooling proxy that
 * cannot keep a connection's prepared statements (PgBouncer before 1.21).
 */
export interface StatementCachePolicy {
  /** The use on a connection from which a text is sent as a prepared statement (1: the first). */
  readonly threshold: number;
  /** Prepared statements of ours a connection holds at most; later texts stay unnamed. */
  readonly capacity: number;
}

export const defaultStatementCachePolicy: StatementCachePolicy = { threshold: 2, capacity: 200 };

interface CachedStatement {
  uses: number;
  name?: string;
}

interface ConnectionStatements {
  readonly byText: Map<string, CachedStatement>;
  /** Names created on this connection, forgotten ones included (they stay on the server). */
  prepared: number;
}

/** Prepared by a connection of ours that the server no longer accepts under that name. */
const staleStatementCodes = new Set(["0A000", "26000"]);

/** A pg Client class (for pg.Pool's `Client` option) that prepares repeated statements. */
export function statementCachingClient(policy: StatementCachePolicy): typeof pg.Client {
  if (!Number.isInteger(policy.threshold) || policy.threshold < 1)
    throw new Error(`statement cache threshold must be a whole number ≥ 1, not ${policy.threshold}`);
  if (!Number.isInteger(policy.capacity) || policy.capacity < 1)
    throw new Error(`statement cache capacity must be a whole number ≥ 1, not ${policy.capacity}`);
  const connections = new WeakMap<pg.Client, ConnectionStatements>();

  const statementsOf = (client: pg.Client): ConnectionStatements => {
    let statements = connections.get(client);
    if (statements === undefined) {
      statements = { byText: new Map(), prepared: 0 };
      connections.set(client, statements);
    }
    return statements;
  };

  /** The name to send `text` under now, or undefined to send it unnamed. */
  const nameFor = (statements: ConnectionStatements, text: string): string | undefined => {
    let cached = statements.byText.get(text);
    if (cached === undefined) {
      // Counting every text would grow without bound on a connection full of one-off texts.
      if (statements.byText.size >= policy.capacity * 4) return undefined;
      cached = { uses: 0 };
      statements.byText.set(text, cached);
    }
    cached.uses += 1;
    if (cached.name !== undefined) return cached.name;
    if (cached.uses < policy.threshold || statements.prepared >= policy.capacity) return undefined;
    statements.prepared += 1;
    // The count makes a re-prepared text's name new: node-pg remembers names it has parsed.
    cached.name = `mt_${createHash("sha1").update(text).digest("hex").slice(0, 24)}_${statements.prepared}`;
    return cached.name;
  };

  class StatementCachingClient extends pg.Client {}
  // Looked up at each call, not captured: a wrapper installed later (bench/sql-counter.ts)
  // still sees every statement.
  const plainQuery = (client: pg.Client, args: unknown[]): unknown =>
    (pg.Client.prototype.query as (...a: unknown[]) => unknown).apply(client, args);

  const preparedQuery = (
    client: pg.Client,
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult> | undefined => {
    const statements = statementsOf(client);
    const name = nameFor(statements, text);
    if (name === undefined) return undefined;
    const idle = client.getTransactionStatus() === "I";
    return (plainQuery(client, [{ name, text, values }]) as Promise<pg.QueryResult>).catch(
      (error: unknown) => {
        if (!staleStatementCodes.has((error as { code?: string }).code ?? "")) throw error;
        const cached = statements.byText.get(text);
        if (cached?.name === name) delete cached.name;
        if (!idle) throw error;
        return plainQuery(client, [text, values]) as Promise<pg.QueryResult>;
      },
    );
  };

  // Kysely calls query(text, values); pg.Pool#query (pg-boss) calls query(text, values, callback).
  StatementCachingClient.prototype.query = function query(this: pg.Client, ...args: unknown[]) {
    const [text, values, callback] = args;
    if (
      typeof text !== "string" ||
      !Array.isArray(values) ||
      values.length === 0 ||
      (callback !== undefined && typeof callback !== "function")
    )
      return plainQuery(this, args);
    const prepared = preparedQuery(this, text, values);
    if (prepared === undefined) return plainQuery(this, args);
    if (callback === undefined) return prepared;
    const done = callback as (error: unknown, result?: pg.QueryResult) => void;
    prepared.then(
      (result) => done(undefined, result),
      (error: unknown) => done(error),
    );
    return undefined;
  } as typeof pg.Client.prototype.query;

  return StatementCachingClient;
}
