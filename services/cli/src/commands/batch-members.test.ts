import { describe, expect, it } from "vitest";
import type { ApiClient, RequestOptions } from "../http/api-client.ts";
import { readBatchMembers } from "./batch-members.ts";

/**
 * The paging loop's stopping rules, against an API stand-in (cli.e2e.test.ts runs it against the
 * real API): a short page ends it, and a server without paging (it ignores `limit` and `afterId`
 * and answers every member) is read once, not forever.
 */
function apiAnswering(answer: (query: RequestOptions["query"]) => unknown[]) {
  const queries: Array<RequestOptions["query"]> = [];
  const api: ApiClient = {
    json: (_method, _path, options) => {
      queries.push(options?.query);
      return Promise.resolve(answer(options?.query));
    },
    text: () => Promise.reject(new Error("unused")),
  };
  return { api, queries };
}

const member = (id: number) => ({ id, memberKey: `m${id}`, extra: "kept" });

describe("readBatchMembers", () => {
  it("reads pages of 500 after the last id until a short page, passing members through unchanged", async () => {
    const all = Array.from({ length: 1000 }, (_, index) => member(index + 1));
    const { api, queries } = apiAnswering((query) => {
      const after = Number(query?.afterId ?? 0);
      return all.filter((m) => m.id > after).slice(0, Number(query?.limit));
    });
    expect(await readBatchMembers(api, 7)).toEqual(all);
    // 1,000 is two full pages: the third, empty, says it is the end.
    expect(queries).toEqual([
      { limit: 500, afterId: undefined },
      { limit: 500, afterId: 500 },
      { limit: 500, afterId: 1000 },
    ]);
  });

  it("asks for no more than --limit", async () => {
    const all = Array.from({ length: 900 }, (_, index) => member(index + 1));
    const { api, queries } = apiAnswering((query) => {
      const after = Number(query?.afterId ?? 0);
      return all.filter((m) => m.id > after).slice(0, Number(query?.limit));
    });
    expect((await readBatchMembers(api, 7, { limit: 620 })).map((m) => (m as { id: number }).id)).toEqual(
      all.slice(0, 620).map((m) => m.id),
    );
    expect(queries).toEqual([
      { limit: 500, afterId: undefined },
      { limit: 120, afterId: 500 },
    ]);
  });

  it("takes a server's answer of every member at once as the whole list", async () => {
    const all = Array.from({ length: 700 }, (_, index) => member(index + 1));
    const { api, queries } = apiAnswering(() => all);
    expect(await readBatchMembers(api, 7)).toEqual(all);
    expect(await readBatchMembers(api, 7, { limit: 3 })).toEqual(all.slice(0, 3));
    expect(queries).toHaveLength(2);
  });
});
