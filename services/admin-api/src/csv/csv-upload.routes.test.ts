import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";
import { DEFAULT_SLICE_BYTES } from "./csv-upload.ts";

/**
 * Issue 25, finding 4: member CSV uploads are read as bytes and decoded in slices (csv-upload.ts)
 * instead of one string from body-parser's text parser. What a client sends is understood as
 * before: the declared charset, a compressed body, a blank body, a file over the row cap.
 */
let harness: ApiHarness;
const runbook = "uploads";
const limits = { memberUploadBytes: 1024 * 1024, memberRows: 5, heavyPerCaller: 2, heavyTotal: 4 };

beforeAll(async () => {
  harness = await startApiHarness({ requestLimits: limits });
  const published = await harness.request("POST", "/runbooks", {
    body: testRunbookYaml({ name: runbook }),
    type: "application/yaml",
  });
  expect(published.status).toBe(201);
});

afterAll(async () => {
  await harness?.stop();
});

const createBatch = (body: string | Uint8Array, headers: Record<string, string>) =>
  fetch(`${harness.url}/api/batches?runbook=${runbook}`, {
    method: "POST",
    headers: { authorization: `Bearer ${harness.adminToken}`, ...headers },
    body,
  }).then(async (response) => ({
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
  }));

const batchCount = async () =>
  Number(
    (
      await harness.db
        .selectFrom("batches")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  );

const storedProxies = async (batchId: unknown) =>
  (
    await harness.db
      .selectFrom("batchMembers")
      .select("dataJson")
      .where("batchId", "=", Number(batchId))
      .orderBy("id")
      .execute()
  ).map((row) => (row.dataJson as { ProxyAddresses: string[] }).ProxyAddresses);

describe("member CSV uploads", () => {
  it("decodes the charset the Content-Type declares (a Windows-1252 file)", async () => {
    const latin1 = Buffer.from(
      "UserPrincipalName,ProxyAddresses\nmueller@contoso.test,M\xfcller\n",
      "latin1",
    );
    const created = await createBatch(latin1, { "content-type": "text/csv; charset=windows-1252" });
    expect(created.status).toBe(201);
    expect(await storedProxies(created.body.id)).toEqual([["Müller"]]);
  });

  it("refuses a charset it cannot decode (415), as body-parser's text parser did", async () => {
    const before = await batchCount();
    const refused = await createBatch("UserPrincipalName\na@contoso.test\n", {
      "content-type": "text/csv; charset=x-no-such-charset",
    });
    expect(refused.status).toBe(415);
    expect(refused.body).toMatchObject({
      code: "payload.unsupported",
      detail: 'unsupported charset "X-NO-SUCH-CHARSET"',
    });
    expect(await batchCount()).toBe(before);
  });

  it("takes a gzip-compressed body", async () => {
    const csv = "UserPrincipalName,ProxyAddresses\nzipped@contoso.test,a;b\n";
    const created = await createBatch(gzipSync(csv), {
      "content-type": "text/csv",
      "content-encoding": "gzip",
    });
    expect(created.status).toBe(201);
    expect(await storedProxies(created.body.id)).toEqual([["a", "b"]]);
  });

  it("refuses a Content-Encoding it cannot decode (415), as body-parser did", async () => {
    const refused = await createBatch("UserPrincipalName\na@contoso.test\n", {
      "content-type": "text/csv",
      "content-encoding": "x-nope",
    });
    expect(refused.status).toBe(415);
    expect(refused.body).toMatchObject({
      code: "payload.unsupported",
      detail: 'unsupported content encoding "x-nope"',
    });
  });

  it("stores a character whose bytes are split across two slices whole", async () => {
    const header = "UserPrincipalName,ProxyAddresses\nsplit@contoso.test,";
    // "ü" is two bytes: its first is the last byte of the first 64 kB slice.
    const filler = "x".repeat(DEFAULT_SLICE_BYTES - 1 - Buffer.byteLength(header));
    const created = await createBatch(`${header}${filler}ü;y\n`, { "content-type": "text/csv" });
    expect(created.status).toBe(201);
    expect(await storedProxies(created.body.id)).toEqual([[`${filler}ü`, "y"]]);
  });

  it("answers a blank body (a BOM, white space) as an empty CSV, as before", async () => {
    const blank = await createBatch("\uFEFF \r\n\t\n", { "content-type": "text/csv" });
    expect(blank.status).toBe(400);
    expect(blank.body).toMatchObject({
      code: "validation.invalid_input",
      problems: [{ path: "", message: "the CSV is empty" }],
    });
  });

  it("writes nothing when the row cap is passed, however far into the file", async () => {
    const before = await batchCount();
    const rows = Array.from({ length: 40 }, (_, i) => `late${i}@contoso.test,a`).join("\n");
    const refused = await createBatch(`UserPrincipalName,ProxyAddresses\n${rows}\n`, {
      "content-type": "text/csv",
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: "member_data.too_many_rows" });
    expect(refused.body.detail).toMatch(
      /^The upload has 40 member rows; the limit for POST \/api\/batches is 5/,
    );
    expect(await batchCount()).toBe(before);
  });
});
