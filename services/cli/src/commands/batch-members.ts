import { z } from "zod";
import { apiPath, type ApiClient } from "../http/api-client.ts";
import { readAs } from "./views.ts";

/** Members per request: a 10,000-member batch is 20 requests of ~300 kB, never one of 6 MB. */
export const MEMBERS_PAGE_SIZE = 500;

/** Only the id is needed to ask for the next page; the members themselves pass through as sent. */
const pageIds = z.array(z.looseObject({ id: z.number() }));

/**
 * `batch members`: the batch's members in id order, read page by page (`limit`, `afterId`) so any
 * size works; `limit` stops after that many. A page shorter than asked is the last one. A page
 * longer than asked comes from a server without paging, which answered every member at once:
 * that answer is the whole list (asking again would only repeat it).
 */
export async function readBatchMembers(
  api: ApiClient,
  batchId: number,
  options: { readonly limit?: number | undefined } = {},
): Promise<unknown[]> {
  const members: unknown[] = [];
  let afterId: number | undefined;
  for (;;) {
    const wanted =
      options.limit === undefined
        ? MEMBERS_PAGE_SIZE
        : Math.min(MEMBERS_PAGE_SIZE, options.limit - members.length);
    const page = await api.json("GET", apiPath("batches", batchId, "members"), {
      query: { limit: wanted, afterId },
    });
    const ids = readAs(pageIds, page, "member list");
    if (ids.length > wanted) return (page as unknown[]).slice(0, options.limit);
    members.push(...(page as unknown[]));
    if (ids.length < wanted || members.length === options.limit) return members;
    afterId = ids.at(-1)!.id;
  }
}
