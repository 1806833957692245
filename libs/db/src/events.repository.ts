import type { Db } from "./connection.ts";
import type { StatusEvent } from "./events.table.ts";

export interface ListEventsPage {
  /** Only events after this id: a timeline client polls with the last id it has seen. */
  readonly afterId?: number;
  readonly limit: number;
}

/** A batch's status timeline, oldest first. */
export async function listEvents(db: Db, batchId: number, page: ListEventsPage): Promise<StatusEvent[]> {
  let query = db.selectFrom("events").selectAll().where("batchId", "=", batchId);
  if (page.afterId !== undefined) query = query.where("id", ">", page.afterId);
  return query.orderBy("id").limit(page.limit).execute();
}
