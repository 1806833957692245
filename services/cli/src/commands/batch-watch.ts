import { exitCodes } from "../errors.ts";
import { apiPath, type ApiClient } from "../http/api-client.ts";
import type { Session } from "./session.ts";
import { batchDetailView, eventsPageView, readAs, type EventView } from "./views.ts";
import { WatchView } from "./watch-view.ts";

/**
 * How `batch watch` ends, for scripts: 0 completed (some members may still have failed: a batch
 * completes when its phases end, see `batch members`), 3 failed, 4 cancelled.
 */
const exitCodeOfEnd: Readonly<Record<string, number>> = {
  completed: exitCodes.ok,
  failed: exitCodes.batchFailed,
  cancelled: exitCodes.batchCancelled,
};

const EVENTS_PAGE = 1000;

/**
 * Polls the batch and its events every `intervalMs` until the batch ends. With --json: each new
 * event as one JSON line (all entities, unchanged), then the final batch as one JSON line.
 */
export async function watchBatch(session: Session, batchId: number, intervalMs: number): Promise<number> {
  const api = session.api();
  const view = session.output.json ? undefined : new WatchView(session.output);
  let afterId: number | undefined;
  for (;;) {
    const events = await eventsAfter(api, batchId, afterId);
    const raw = await api.json("GET", apiPath("batches", batchId));
    const batch = readAs(batchDetailView, raw, "batch");
    const end = exitCodeOfEnd[batch.status];
    // Events first, then the batch: the status shown is never older than the events above it.
    // At the end, once more: the changes that ended the batch are printed before it exits.
    if (end !== undefined) events.push(...(await eventsAfter(api, batchId, events.at(-1)?.id ?? afterId)));
    afterId = events.at(-1)?.id ?? afterId;
    if (view === undefined) {
      for (const event of events) session.output.writeJsonLine(event);
    } else {
      view.update(batch, events);
    }
    if (end !== undefined) {
      if (view === undefined) session.output.writeJsonLine(raw);
      return end;
    }
    await session.context.sleep(intervalMs);
  }
}

async function eventsAfter(
  api: ApiClient,
  batchId: number,
  afterId: number | undefined,
): Promise<EventView[]> {
  const events: EventView[] = [];
  let cursor = afterId;
  for (;;) {
    const page = readAs(
      eventsPageView,
      await api.json("GET", apiPath("batches", batchId, "events"), {
        query: { afterId: cursor, limit: EVENTS_PAGE },
      }),
      "event page",
    );
    events.push(...page.items);
    if (page.nextAfterId === null) return events;
    cursor = page.nextAfterId;
  }
}
