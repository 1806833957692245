import type { ColumnType } from "kysely";

/**
 * Column shapes shared by the table interfaces. Rows are camelCase in TypeScript and snake_case
 * in PostgreSQL: `createDb` installs Kysely's CamelCasePlugin, which maps identifiers both ways.
 */

/** timestamptz: read as Date, written as Date or an ISO string. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;
/** timestamptz with a `DEFAULT now()`: optional on insert. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;

/**
 * A status column: starts at its DEFAULT (the machine's initial state) and is never written by the
 * query builder. The only way to change it is the guarded transition in transition.ts, so every
 * change is checked against the state machine and leaves an event behind.
 */
export type StatusColumn<S extends string> = ColumnType<S, never, never>;

/** jsonb: read as the parsed value; repositories write it through `jsonb()` (json.ts). */
export type JsonColumn<T> = ColumnType<T, T, T>;
/** jsonb with a DEFAULT ('{}'): optional on insert. */
export type JsonColumnWithDefault<T> = ColumnType<T, T | undefined, T>;
export type JsonObject = Record<string, unknown>;
