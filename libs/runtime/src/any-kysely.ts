import type { Kysely } from "kysely";

/**
 * The service's database handle, whatever its table types: the runtime only runs raw SQL on it
 * (its own tables, pg-boss's, and `outbox` / `idempotency_keys`), so it must accept any
 * `Kysely<Database>`, which `Kysely<unknown>` does not.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyKysely = Kysely<any>;
