import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";

/**
 * 000 "Sensitive Data": member PII lives in batch_members.data_json and nowhere else. Error
 * responses go to browsers, terminals and logs, so they name lines and columns, never values,
 * and never repeat the caller's token.
 */
let harness: ApiHarness;
const email = "adele.vance@contoso.test";
const name = "Adele Vance";

beforeAll(async () => {
  harness = await startApiHarness();
  const yaml = testRunbookYaml({ name: "pii" });
  expect((await harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" })).status).toBe(
    201,
  );
});

afterAll(async () => {
  await harness?.stop();
});

function expectNoPii(response: { status: number; text: string }) {
  expect(response.status).toBeGreaterThanOrEqual(400);
  expect(response.text).not.toContain(email);
  expect(response.text).not.toContain("adele.vance");
  expect(response.text).not.toContain(name);
}

describe("CSV errors never echo member data", () => {
  it.each([
    // Forgetting the header row makes the first member's values look like column names.
    ["a CSV without its header row", `${email},${name}\nalex@contoso.test,Alex Wilber\n`],
    ["a row with an extra field", `UserPrincipalName,DisplayName\n${email},${name},extra\n`],
    ["an unclosed quote", `UserPrincipalName,DisplayName\n${email},"${name}\n`],
    ["a quote inside a field", `UserPrincipalName,DisplayName\n${email},Ad"ele Vance"\n`],
    ["a duplicate member", `UserPrincipalName,DisplayName\n${email},${name}\n${email},${name}\n`],
    ["an empty primary key", `UserPrincipalName,DisplayName\n,${name}\n`],
  ])("%s", async (_what, csv) => {
    const response = await harness.request("POST", "/batches?runbook=pii", { body: csv, type: "text/csv" });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("member_data.invalid");
    expect(response.body.detail).toMatch(/line \d/);
    expectNoPii(response);
  });

  it("still tells the operator which column is missing and that line 1 must be the header", async () => {
    const response = await harness.request("POST", "/batches?runbook=pii", {
      body: `${email},${name}\nalex@contoso.test,Alex Wilber\n`,
      type: "text/csv",
    });
    expect(response.body.detail).toContain("'UserPrincipalName'");
    expect(response.body.detail).toContain("header");
  });
});

describe("request errors never echo member data or tokens", () => {
  it("malformed JSON", async () => {
    const response = await harness.request("POST", "/runbooks", {
      body: `{"yaml": "members: ${email} ${name}`,
      type: "application/json",
    });
    expect(response.status).toBe(400);
    expect(response.text).not.toContain(email);
  });

  it("a rejected token", async () => {
    // A real token with its signature altered: the body must not repeat any of it.
    const token = `${harness.adminToken.slice(0, -4)}AAAA`;
    const response = await harness.request("GET", "/batches", { token });
    expect(response.status).toBe(401);
    for (const part of token.split(".")) expect(response.text).not.toContain(part);
  });

  it("a Reader's write", async () => {
    const response = await harness.request("POST", "/batches?runbook=pii", {
      token: harness.readerToken,
      body: `UserPrincipalName\n${email}\n`,
      type: "text/csv",
    });
    expect(response.status).toBe(403);
    expectNoPii(response);
    for (const part of harness.readerToken.split(".")) expect(response.text).not.toContain(part);
  });
});
