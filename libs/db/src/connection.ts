import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { QueryBuilderCamelCasePlugin } from "./camel-case.ts";
import type { Database } from "./schema.ts";
import {
  defaultStatementCachePolicy,
  statementCachingClient,
  type StatementCachePolicy,
} from "./statement-cache.ts";

// INT8 (count(*), bigint ids) as JS numbers: our counts and ids stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/**
 * A password asked for at each new connection (pg calls it per connection): passwordless
 * PostgreSQL (`DATABASE_AUTH=entra`) answers with a Microsoft Entra access token that expires
 * within the hour, so no connection string may hold it.
 */
export type DatabasePassword = () => Promise<string>;

/**
 * The pg Client/Pool connection options for a URL and an optional password function. pg lets
 * the connection string's fields override the configuration's (an absent password parses as
 * ""), so with a password function the URL is parsed here and its password dropped.
 */
export function pgConnectionConfig(
  connectionString: string,
  password: DatabasePassword | undefined,
): pg.ClientConfig {
  if (password === undefined) return { connectionString };
  const { password: _fromUrl, ...fields } = parseIntoClientConfig(connectionString);
  return { ...fields, password };
}

export interface DatabaseOptions {
  readonly connectionString: string;
  /** Overrides the connection string's password (see DatabasePassword). */
  readonly password?: DatabasePassword;
  /** Pool size; each service process holds one pool. */
  readonly maxConnections?: number;
  readonly applicationName?: string;
  /**
   * Prepares the statements each connection repeats (statement-cache.ts); on by default. false
   * for a transaction-pooling proxy that does not keep a connection's prepared statements.
   */
  readonly prepareStatements?: boolean | StatementCachePolicy;
}

export type Db = Kysely<Database>;

export function createDb(options: DatabaseOptions): Db {
  const prepare = options.prepareStatements ?? true;
  const pool = new pg.Pool({
    ...(prepare === false
      ? {}
      : { Client: statementCachingClient(prepare === true ? defaultStatementCachePolicy : prepare) }),
    ...pgConnectionConfig(options.connectionString, options.password),
    max: options.maxConnections ?? 10,
    application_name: options.applicationName ?? "matoolkit",
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  // Nor may a checked-out one (a transaction between statements): pg-pool drops its own error
  // listener at checkout, and the server's FATAL at a restart would be an unhandled 'error' event.
  // The query in progress, or the next one, fails instead and the pool discards the client.
  pool.on("connect", (client) => client.on("error", () => {}));
  return new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    // The query builder is camelCase, raw SQL is snake_case (see camel-case.ts).
    plugins: [new QueryBuilderCamelCasePlugin()],
  });
}
