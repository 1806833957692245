import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

/**
 * GET /api/batches/{id}/members pages by keyset (`limit`, `afterId`) and still answers every
 * member without `limit`, as it did before paging existed; the next page's address is in the
 * Link header, so the body stays a bare array either way.
 */
let harness: ApiHarness;
/** A batch of 7 members, created between two others so their members surround its own. */
let batchId: number;
let allIds: number[];

const csvOf = (prefix: string, count: number) =>
  "UserPrincipalName\n" +
  Array.from({ length: count }, (_, index) => `${prefix}${index}@contoso.test\n`).join("");

async function createBatch(prefix: string, count: number): Promise<number> {
  const created = await harness.request("POST", "/batches?runbook=paging", {
    body: csvOf(prefix, count),
    type: "text/csv",
  });
  expect(created.status).toBe(201);
  return created.body.id as number;
}

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({ name: "paging" });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
  await createBatch("before", 3);
  batchId = await createBatch("member", 7);
  await createBatch("after", 3);
  const all = await harness.request("GET", `/batches/${batchId}/members`, { token: harness.readerToken });
  expect(all.status).toBe(200);
  allIds = all.body.map((member: Json) => member.id);
});

afterAll(async () => {
  await harness?.stop();
});

const members = (query: string) => harness.request("GET", `/batches/${batchId}/members${query}`);
const keys = (body: Json[]) => body.map((member) => member.memberKey);

describe("GET /api/batches/{id}/members", () => {
  it("answers every member of the batch, in id order, without limit and without a Link header", async () => {
    const all = await members("");
    expect(keys(all.body)).toEqual(Array.from({ length: 7 }, (_, index) => `member${index}@contoso.test`));
    expect(allIds).toEqual([...allIds].sort((a, b) => a - b));
    expect(all.headers.get("link")).toBeNull();
  });

  it("gives the first page with limit and the next page's address in the Link header", async () => {
    const first = await members("?limit=3");
    expect(first.status).toBe(200);
    expect(first.body.map((member: Json) => member.id)).toEqual(allIds.slice(0, 3));
    expect(first.body[0]).toMatchObject({ batchId, status: "active", dataJson: expect.any(Object) });
    expect(first.headers.get("link")).toBe(
      `</api/batches/${batchId}/members?afterId=${allIds[2]}&limit=3>; rel="next"`,
    );
  });

  it("follows the Link headers through every page to the last, which has none", async () => {
    const pages: number[][] = [];
    let next: string | null = `/api/batches/${batchId}/members?limit=3`;
    while (next !== null) {
      const page = await harness.request("GET", next.replace(/^\/api/, ""));
      expect(page.status).toBe(200);
      pages.push(page.body.map((member: Json) => member.id));
      next = /^<([^>]+)>; rel="next"$/.exec(page.headers.get("link") ?? "")?.[1] ?? null;
    }
    expect(pages).toEqual([allIds.slice(0, 3), allIds.slice(3, 6), allIds.slice(6)]);
  });

  it("gives the members after afterId: a full last page has no Link, past the end is empty", async () => {
    const next = await members(`?afterId=${allIds[2]}&limit=4`);
    expect(next.body.map((member: Json) => member.id)).toEqual(allIds.slice(3));
    expect(next.headers.get("link")).toBeNull();
    // The batch's last id: the later batch's members are not this batch's.
    const past = await members(`?afterId=${allIds[6]}&limit=100`);
    expect(past.body).toEqual([]);
    expect(past.headers.get("link")).toBeNull();
    // afterId alone: every member after it.
    expect((await members(`?afterId=${allIds[4]}`)).body.map((member: Json) => member.id)).toEqual(
      allIds.slice(5),
    );
  });

  it("accepts limit 1 and 1000", async () => {
    expect((await members("?limit=1")).body).toHaveLength(1);
    expect((await members("?limit=1000")).body).toHaveLength(7);
  });

  it.each([
    ["limit=0", "'limit'"],
    ["limit=1001", "'limit'"],
    ["limit=ten", "'limit'"],
    ["limit=1&limit=2", "'limit'"],
    ["afterId=-1", "'afterId'"],
    ["afterId=1.5", "'afterId'"],
    ["afterId=", "'afterId'"],
    ["afterId=2147483648", "'afterId'"],
  ])("rejects %s with a 400 naming the parameter", async (query, name) => {
    const response = await members(`?${query}`);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(response.body.code).toBe("validation.invalid_input");
    expect(response.body.detail).toContain(name);
  });

  it("answers an unknown batch with 404, paged or not", async () => {
    expect((await harness.request("GET", "/batches/999999/members")).status).toBe(404);
    expect((await harness.request("GET", "/batches/999999/members?limit=10&afterId=5")).status).toBe(404);
  });
});
