import { CompiledQuery } from "kysely";
import type PgBoss from "pg-boss";
import type { AnyKysely } from "../any-kysely.ts";

/**
 * Lets pg-boss run a statement on our connection (pg-boss's `{ db }` option), so its job
 * inserts commit or roll back with the rest of our transaction.
 */
export function kyselyBossDb(db: AnyKysely): PgBoss.Db {
  return {
    async executeSql(text: string, values: unknown[]) {
      const result = await db.executeQuery(CompiledQuery.raw(text, values ?? []));
      return { rows: result.rows as unknown[] };
    },
  };
}
