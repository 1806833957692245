import { afterEach, describe, expect, it } from "vitest";
import { startKeyVaultSimulator, type KeyVaultSimulator } from "./key-vault-simulator.ts";

/**
 * The simulator refuses what Key Vault refuses (its rules cite the docs in key-vault-simulator.ts),
 * checked over plain HTTP: the SDK always sends a valid request, so only a raw one shows the refusals.
 */
let vault: KeyVaultSimulator;
afterEach(() => vault.close());

const bearer = { authorization: "Bearer officer" };
async function call(path: string, init: RequestInit = {}) {
  const response = await fetch(`${vault.url}${path}`, init);
  return { status: response.status, headers: response.headers, body: (await response.json()) as unknown };
}

describe("the Key Vault simulator", () => {
  it("challenges a request without a valid token, and refuses one without a known api-version", async () => {
    vault = await startKeyVaultSimulator({
      identities: new Map([["officer", "Key Vault Secrets Officer"]]),
      tenantId: "11111111-1111-4111-8111-111111111111",
    });
    for (const headers of [{}, { authorization: "Bearer stolen" }] as Array<Record<string, string>>) {
      const challenged = await call("/secrets/a?api-version=7.6", { headers });
      expect(challenged.status).toBe(401);
      expect(challenged.headers.get("www-authenticate")).toBe(
        'Bearer authorization="https://login.microsoftonline.com/11111111-1111-4111-8111-111111111111", resource="https://vault.azure.net"',
      );
    }
    expect((await call("/secrets/a", { headers: bearer })).status).toBe(400);
    expect((await call("/secrets/a?api-version=1.0", { headers: bearer })).status).toBe(400);
    expect((await call("/secrets/a_b?api-version=7.6", { headers: bearer })).status).toBe(400);
  });

  it("creates a version per PUT, lists them without values across pages, and refuses reads of a disabled one", async () => {
    vault = await startKeyVaultSimulator({
      identities: new Map([
        ["officer", "Key Vault Secrets Officer"],
        ["user", "Key Vault Secrets User"],
      ]),
      pageSize: 1,
    });
    const put = (value: unknown, token = "officer") =>
      call("/secrets/key?api-version=2026-04-01", {
        method: "PUT",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ value }),
      });
    expect(await call("/secrets/key/versions?api-version=7.6", { headers: bearer })).toMatchObject({
      status: 404,
      body: { error: { code: "SecretNotFound" } },
    });
    expect((await put(42)).status).toBe(400);
    expect(await put("v", "user")).toMatchObject({
      status: 403,
      body: { error: { code: "Forbidden", innererror: { code: "ForbiddenByRbac" } } },
    });
    const first = (await put("one")).body as { id: string; value: string };
    await put("two");
    const page1 = (await call("/secrets/key/versions?api-version=7.6", { headers: bearer })).body as {
      value: Array<Record<string, unknown>>;
      nextLink: string;
    };
    expect(page1.value).toHaveLength(1);
    expect(page1.value[0]).not.toHaveProperty("value");
    const page2 = (await call(page1.nextLink.replace(vault.url, ""), { headers: bearer })).body as {
      value: unknown[];
      nextLink: string | null;
    };
    expect(page2).toMatchObject({ nextLink: null });
    expect(page2.value).toHaveLength(1);
    expect(
      (await call("/secrets/key/versions?api-version=7.6&maxresults=26", { headers: bearer })).status,
    ).toBe(400);

    const version = first.id.split("/").at(-1)!;
    vault.store.setEnabled("key", version, false);
    expect(await call(`/secrets/key/${version}?api-version=7.6`, { headers: bearer })).toMatchObject({
      status: 403,
      body: { error: { code: "Forbidden", innererror: { code: "SecretDisabled" } } },
    });
  });
});
