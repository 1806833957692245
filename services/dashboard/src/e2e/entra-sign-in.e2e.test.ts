import type { Request } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../test/browser-harness.ts";

/**
 * Entra mode: the dashboard learns the authority, client id and scopes from GET /api/auth/config
 * and sends the browser to Entra's authorize endpoint with auth code + PKCE. Entra itself is not
 * reachable here: its metadata is served by a route of the browser context and the authorize
 * request is stopped and examined (what reaches Entra is what the app registration must allow).
 */
const tenantId = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const clientId = "0f0e7c1c-3a51-4c8f-9a43-7d3e1b2a9c11";
const authority = `https://login.microsoftonline.com/${tenantId}`;
let harness: BrowserHarness;

beforeAll(async () => {
  // Not signed in: a local token means nothing to an API that trusts Entra only.
  harness = await startBrowserHarness({
    role: null,
    env: {
      MATOOLKIT_AUTH_MODE: "entra",
      AZURE_AD_TENANT_ID: tenantId,
      AZURE_AD_CLIENT_ID: clientId,
      AZURE_AD_SCOPES: "access_as_user",
    },
  });
}, 120_000);

// The dashboard works under its Content-Security-Policy: no page reported a violation.
afterEach(async () => {
  expect(await harness?.takeCspViolations(), "Content-Security-Policy violations").toEqual([]);
});

afterAll(async () => {
  await harness?.stop();
});

describe("Entra sign-in (browser)", { timeout: 60_000 }, () => {
  it("sends the user to Entra with PKCE, the API's client id and its scope", async () => {
    const context = harness.page.context();
    await context.route("https://login.microsoftonline.com/**", (route) => {
      const url = new URL(route.request().url());
      if (url.pathname.endsWith("/oauth2/v2.0/authorize")) {
        return route.fulfill({ contentType: "text/html", body: "<title>Entra sign-in</title>" });
      }
      if (url.pathname.includes("discovery/instance")) {
        return route.fulfill({
          json: {
            tenant_discovery_endpoint: `${authority}/v2.0/.well-known/openid-configuration`,
            "api-version": "1.1",
            metadata: [
              {
                preferred_network: "login.microsoftonline.com",
                preferred_cache: "login.windows.net",
                aliases: ["login.microsoftonline.com"],
              },
            ],
          },
        });
      }
      return route.fulfill({
        json: {
          issuer: `${authority}/v2.0`,
          authorization_endpoint: `${authority}/oauth2/v2.0/authorize`,
          token_endpoint: `${authority}/oauth2/v2.0/token`,
          end_session_endpoint: `${authority}/oauth2/v2.0/logout`,
          jwks_uri: `${authority}/discovery/v2.0/keys`,
        },
      });
    });
    const page = harness.page;
    const document = await page.goto(`${harness.apiUrl}/`);
    // The page may reach this tenant's authority (MSAL's metadata and token requests), nothing else.
    const connectSrc = /(?:^|;)\s*connect-src ([^;]*)/.exec(
      document!.headers()["content-security-policy"] ?? "",
    );
    expect(connectSrc?.[1]?.split(" ")).toEqual([
      "'self'",
      `${authority}/`,
      "https://login.microsoftonline.com/common/discovery/instance",
    ]);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.getByRole("heading", { name: "Or paste an access token" }).waitFor();

    const authorize = page.waitForRequest((request: Request) =>
      request.url().includes("/oauth2/v2.0/authorize"),
    );
    await page.getByRole("button", { name: "Sign in with Microsoft Entra ID" }).click();
    const url = new URL((await authorize).url());
    expect(`${url.origin}${url.pathname}`).toBe(`${authority}/oauth2/v2.0/authorize`);
    const params = url.searchParams;
    expect(params.get("client_id")).toBe(clientId);
    expect(params.get("response_type")).toBe("code");
    expect(params.get("code_challenge_method")).toBe("S256");
    expect(params.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get("redirect_uri")).toBe(`${harness.apiUrl}/`);
    expect(params.get("scope")?.split(" ")).toContain(`api://${clientId}/access_as_user`);
  });
});
