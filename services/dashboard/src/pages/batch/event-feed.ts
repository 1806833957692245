import { getEvents, type StatusEvent } from "./batch-api.ts";

/** Events kept in memory and shown: the newest; older ones stay in the API. */
export const KEPT_EVENTS = 300;
const PAGE = 1000;

/**
 * Follows a batch's timeline: each `poll` reads the events after the last one seen (afterId),
 * page after page until the end, and keeps the newest `KEPT_EVENTS`. So a reload is never
 * needed and an event is never read twice.
 */
export class EventFeed {
  private lastId = 0;
  events: readonly StatusEvent[] = [];
  /** Every event read since the page opened, kept or not. */
  seen = 0;

  constructor(private readonly batchId: number) {}

  /** Reads what is new; answers whether anything was. */
  async poll(): Promise<boolean> {
    let fresh: StatusEvent[] = [];
    for (;;) {
      const page = await getEvents(this.batchId, this.lastId, PAGE);
      fresh = fresh.concat(page.items).slice(-KEPT_EVENTS);
      this.seen += page.items.length;
      const last = page.items.at(-1);
      if (last !== undefined) this.lastId = last.id;
      if (page.nextAfterId === null) break;
    }
    if (fresh.length === 0) return false;
    this.events = this.events.concat(fresh).slice(-KEPT_EVENTS);
    return true;
  }
}
