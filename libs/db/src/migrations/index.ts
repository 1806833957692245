import type { Migration } from "kysely";
import { initialMigration } from "./0001_initial.ts";

/** Applied in key order by migrate.ts; names sort lexically, hence the zero-padded prefix. */
export const migrations: Record<string, Migration> = {
  "0001_initial": initialMigration,
};
