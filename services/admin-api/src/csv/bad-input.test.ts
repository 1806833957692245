import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";

/** Text PostgreSQL cannot store (it answered 500 before) is a 400 naming the line, never the value. */
let harness: ApiHarness;
const runbook = "bad-input";

beforeAll(async () => {
  harness = await startApiHarness();
  const published = await harness.request("POST", "/runbooks", {
    body: testRunbookYaml({ name: runbook }),
    type: "application/yaml",
  });
  expect(published.status).toBe(201);
});

afterAll(async () => {
  await harness?.stop();
});

const createBatch = (body: string | Uint8Array) =>
  fetch(`${harness.url}/api/batches?runbook=${runbook}`, {
    method: "POST",
    headers: { authorization: `Bearer ${harness.adminToken}`, "content-type": "text/csv" },
    body,
  }).then(async (response) => ({ status: response.status, text: await response.text() }));

const batchCount = async () =>
  Number(
    (
      await harness.db
        .selectFrom("batches")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe("CSV uploads", () => {
  it("answers 400 naming the line of a NUL byte, without the value", async () => {
    const response = await createBatch(
      "UserPrincipalName,ProxyAddresses\nalex@contoso.test,a\nsecret\0value@contoso.test,b\n",
    );
    expect(response.status).toBe(400);
    const body = JSON.parse(response.text);
    expect(body.code).toBe("member_data.invalid");
    expect(body.problems).toEqual([
      { line: 3, message: "column 7 contains a NUL character (U+0000), which cannot be stored" },
    ]);
    expect(response.text).not.toContain("secret");
    expect(await batchCount()).toBe(0);
  });

  it("answers 400 for bytes that are not UTF-8 (a Windows-1252 file)", async () => {
    const latin1 = Buffer.from("UserPrincipalName,ProxyAddresses\nm\xfcller@contoso.test,a\n", "latin1");
    const response = await createBatch(latin1);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text).problems).toEqual([
      { line: 2, message: expect.stringContaining("is not valid UTF-8") },
    ]);
  });

  it("refuses a header that repeats a column, naming it and both positions", async () => {
    const response = await createBatch(
      "UserPrincipalName,ProxyAddresses,UserPrincipalName\nalex@contoso.test,a,other@contoso.test\n",
    );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text).problems).toEqual([
      { line: 1, message: "column 'UserPrincipalName' appears twice in the header (fields 1 and 3)" },
    ]);
    expect(response.text).not.toContain("other@contoso.test");
  });
});

describe("oversized keys", () => {
  it("answers 400 for a primary key PostgreSQL could not index (a 500 before; found by the fuzz test)", async () => {
    const response = await createBatch(
      `UserPrincipalName,ProxyAddresses\n${"x".repeat(10_000)}@contoso.test,a\n`,
    );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text).problems).toEqual([
      { line: 2, message: "primary key 'UserPrincipalName' is longer than 512 characters" },
    ]);
  });
});

describe("JSON bodies", () => {
  it("answers 400 for a member row with \\u0000 or a lone surrogate, naming the row", async () => {
    const created = await createBatch("UserPrincipalName,ProxyAddresses\nalex@contoso.test,a\n");
    expect(created.status).toBe(201);
    const batchId = JSON.parse(created.text).id ?? JSON.parse(created.text).batchId;
    for (const value of ["secret\u0000x@contoso.test", "secret\ud800x@contoso.test"]) {
      const response = await harness.request("POST", `/batches/${batchId}/members`, {
        body: JSON.stringify({
          members: [{ UserPrincipalName: "b@contoso.test" }, { UserPrincipalName: value }],
        }),
        type: "application/json",
      });
      expect(response.status).toBe(400);
      expect(response.body.problems).toEqual([{ path: "members.1", message: expect.any(String) }]);
      expect(response.text).not.toContain("secret");
    }
  });

  it("answers 400 for a runbook with \\u0000, at its line and column", async () => {
    const yaml = testRunbookYaml({ name: "nul-runbook" }).replace(
      "phases:",
      "description: a\u0000b\nphases:",
    );
    for (const request of [
      { body: yaml, type: "application/yaml" },
      { body: JSON.stringify({ yaml }), type: "application/json" },
    ]) {
      const response = await harness.request("POST", "/runbooks", request);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe("runbook.invalid");
      expect(response.body.problems).toEqual([
        {
          path: "",
          line: 10, // the line testRunbookYaml's "phases:" was on
          column: 15,
          message: "contains a NUL character (U+0000), which cannot be stored",
        },
      ]);
    }
  });
});
