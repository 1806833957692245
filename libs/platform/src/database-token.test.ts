import { once } from "node:events";
import type { AddressInfo } from "node:net";
import type { AccessToken, TokenCredential } from "@azure/identity";
import { createDb } from "@matoolkit/db";
import { MatoolkitError } from "@matoolkit/domain";
import { createLogger } from "@matoolkit/runtime";
import { startLoginRecorder } from "@matoolkit/testing";
import { afterEach, describe, expect, it } from "vitest";
import { entraDatabasePassword, postgresEntraScope } from "./database-token.ts";
import { openDatabase } from "./open-database.ts";
import { platformConfigFromEnv } from "./platform-config.ts";

/** A credential whose tokens expire when the test says: token-1, token-2, … */
function countingCredential(lifetimeMs: number, now: () => number) {
  const scopes: (string | string[])[] = [];
  const credential: TokenCredential = {
    getToken: async (scope): Promise<AccessToken> => {
      scopes.push(scope);
      await Promise.resolve();
      return { token: `token-${scopes.length}`, expiresOnTimestamp: now() + lifetimeMs };
    },
  };
  return { credential, scopes };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function loginError(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected the login to be refused");
}

describe("passwordless PostgreSQL (DATABASE_AUTH=entra)", () => {
  it("asks for the PostgreSQL audience once while the token is fresh, and again near its expiry", async () => {
    let clock = 1_000_000;
    const { credential, scopes } = countingCredential(60 * 60_000, () => clock);
    const password = entraDatabasePassword(credential, { now: () => clock });

    expect(await Promise.all([password(), password(), password()])).toEqual([
      "token-1",
      "token-1",
      "token-1",
    ]);
    clock += 54 * 60_000; // 6 minutes before expiry: still outside the 5-minute refresh margin
    expect(await password()).toBe("token-1");
    clock += 2 * 60_000;
    expect(await password()).toBe("token-2");
    expect(scopes).toEqual([postgresEntraScope, postgresEntraScope]);
  });

  it("reports a credential failure with a stable reason and without the credential's message, then tries again", async () => {
    let fail = true;
    const credential: TokenCredential = {
      getToken: async () => {
        if (fail) throw new Error("AADSTS700016: secret-looking detail eyJhbGciOi");
        return { token: "token-after-failure", expiresOnTimestamp: Date.now() + 3_600_000 };
      },
    };
    const password = entraDatabasePassword(credential);
    const error = await password().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MatoolkitError);
    expect((error as MatoolkitError).reason).toBe("database.auth_failed");
    expect((error as Error).message).not.toContain("eyJ");
    fail = false;
    expect(await password()).toBe("token-after-failure");
  });

  it("logs in with the current token at every new pool connection", async () => {
    const recorder = await startLoginRecorder();
    cleanups.push(recorder.close);
    let clock = 5_000_000;
    const { credential } = countingCredential(60 * 60_000, () => clock);
    const db = createDb({
      connectionString: recorder.url,
      password: entraDatabasePassword(credential, { now: () => clock }),
    });
    cleanups.push(() => db.destroy());

    expect(await loginError(() => db.selectNoFrom((eb) => eb.lit(1).as("one")).execute())).toContain(
      "login refused by the test recorder",
    );
    clock += 58 * 60_000;
    await loginError(() => db.selectNoFrom((eb) => eb.lit(1).as("one")).execute());
    expect(recorder.passwords).toEqual(["token-1", "token-2"]);
  });

  it("boots the platform's database with a managed identity token as the password, never the URL's", async () => {
    // Azure Container Apps' managed identity endpoint (the App Service 2019-08-01 protocol):
    // @azure/identity reads IDENTITY_ENDPOINT and IDENTITY_HEADER from the process environment.
    const requests: URL[] = [];
    const { createServer: createHttpServer } = await import("node:http");
    const identity = createHttpServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://127.0.0.1");
      requests.push(url);
      if (request.headers["x-identity-header"] !== "test-identity-header") {
        response.writeHead(401).end();
        return;
      }
      response.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          access_token: "entra-token-for-postgres",
          expires_on: String(Math.floor(Date.now() / 1000) + 3600),
          resource: url.searchParams.get("resource"),
          token_type: "Bearer",
        }),
      );
    });
    identity.listen(0, "127.0.0.1");
    await once(identity, "listening");
    cleanups.push(() => new Promise<void>((resolve) => identity.close(() => resolve())));
    const identityUrl = `http://127.0.0.1:${(identity.address() as AddressInfo).port}/msi/token`;
    const saved = { endpoint: process.env.IDENTITY_ENDPOINT, header: process.env.IDENTITY_HEADER };
    process.env.IDENTITY_ENDPOINT = identityUrl;
    process.env.IDENTITY_HEADER = "test-identity-header";
    cleanups.push(async () => {
      for (const [name, value] of [
        ["IDENTITY_ENDPOINT", saved.endpoint],
        ["IDENTITY_HEADER", saved.header],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });

    const recorder = await startLoginRecorder();
    cleanups.push(recorder.close);
    const clientId = "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";
    const config = platformConfigFromEnv({
      DATABASE_URL: recorder.url,
      DATABASE_AUTH: "entra",
      DATABASE_AUTH_CLIENT_ID: clientId,
      IDENTITY_ENDPOINT: identityUrl,
      IDENTITY_HEADER: "test-identity-header",
    });
    expect(config.databaseCredential).toEqual({ kind: "managed-identity", clientId });

    const message = await loginError(() =>
      openDatabase(config, createLogger({ level: "silent", name: "test" }), "test"),
    );
    expect(message).toContain("login refused by the test recorder");
    expect(recorder.passwords[0]).toBe("entra-token-for-postgres");
    expect(requests[0]?.searchParams.get("resource")).toBe("https://ossrdbms-aad.database.windows.net");
    expect(requests[0]?.searchParams.get("client_id")).toBe(clientId);
  });

  it("refuses entra without a server URL, or with a password in the URL, naming the variable", () => {
    expect(() => platformConfigFromEnv({ DATABASE_AUTH: "entra" })).toThrow(
      /DATABASE_AUTH: .*set DATABASE_URL/,
    );
    expect(() =>
      platformConfigFromEnv({
        DATABASE_AUTH: "entra",
        DATABASE_URL: "postgres://role:secret@db.example/matoolkit",
      }),
    ).toThrow(/DATABASE_AUTH: .*remove the password/);
    expect(() => platformConfigFromEnv({ DATABASE_AUTH: "kerberos" })).toThrow(/DATABASE_AUTH:/);
    expect(() =>
      platformConfigFromEnv({ DATABASE_URL: "postgres://db/x", DATABASE_AUTH_CLIENT_ID: "not-a-guid" }),
    ).toThrow(/DATABASE_AUTH_CLIENT_ID: must be the managed identity's client id/);
  });
});
