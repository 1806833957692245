import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliProcess } from "../../../test/cli-process.ts";
import {
  startFakeDeviceCodeAuthority,
  type FakeAuthority,
} from "../../../test/fake-device-code-authority.ts";

const clientId = "3f1c9a5e-2b7d-4c8e-9f10-1a2b3c4d5e6f";
const scope = "api://matoolkit-test/access_as_user";

/**
 * `auth login | status | logout` and an API call in entra mode, as separate CLI processes
 * against a local stand-in for Entra's device-code grant: the sign-in must survive the process
 * through the file token cache and the saved account, and later commands must stay silent.
 */
describe("Entra ID device-code sign-in (against a local RFC 8628 authority)", { timeout: 60_000 }, () => {
  let authority: FakeAuthority;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    // 60 s tokens: inside MSAL's 5-minute refresh margin, so each later process must refresh.
    authority = await startFakeDeviceCodeAuthority({ clientId, scope, accessTokenSeconds: 60 });
    dir = await mkdtemp(path.join(tmpdir(), "matoolkit-cli-entra-"));
    const caFile = path.join(dir, "authority-ca.pem");
    await writeFile(caFile, authority.certificatePem);
    env = {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      MATOOLKIT_CONFIG: path.join(dir, "profile", "config.json"),
      NODE_EXTRA_CA_CERTS: caFile,
      MATOOLKIT_AUTH_MODE: "entra",
      MATOOLKIT_CLI_TENANT_ID: authority.tenantId,
      MATOOLKIT_CLI_CLIENT_ID: clientId,
      MATOOLKIT_API_SCOPE: scope,
      AZURE_AUTHORITY_HOST: authority.host,
      MATOOLKIT_API_URL: `${authority.host}/api`,
    };
  });

  afterAll(async () => {
    await authority?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => runCliProcess(args, env);
  const stateDir = () => path.join(dir, "profile");

  it("says 'not signed in' and refuses API calls before login, without prompting", async () => {
    const status = await cli("auth", "status");
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^Account: +not signed in \(run `matoolkit auth login`\)$/m);
    const call = await cli("runbook", "list");
    expect(call.code).toBe(1);
    expect(call.stderr).toBe(
      "error auth.login_required: not signed in to Entra ID: run `matoolkit auth login`\n",
    );
    expect(authority.deviceCodeRequests()).toBe(0);
  });

  it("signs in with the device code printed on stderr, then keeps the account and tokens in private files", async () => {
    const login = await cli("auth", "login");
    expect(login.stderr).toBe(
      `To sign in, open ${authority.host}/devicelogin and enter the code FAKE-CODE to authenticate.\n`,
    );
    expect(login.code).toBe(0);
    expect(login.stdout).toBe(`Signed in as ${authority.username} (tenant ${authority.tenantId}).\n`);
    expect(authority.deviceCodeRequests()).toBe(1);
    // RFC 8628: polled while pending, then the tokens; login then reads the token's expiry, which
    // with this test's 60 s tokens means one refresh.
    expect(authority.grants()).toEqual(["device_code", "device_code", "refresh_token"]);

    expect((await stat(stateDir())).mode & 0o777).toBe(0o700);
    const files = (await readdir(stateDir())).sort();
    expect(files).toEqual(["matoolkit-cli.auth-record.json", "matoolkit-cli.cache.json"]);
    for (const file of files) expect((await stat(path.join(stateDir(), file))).mode & 0o777).toBe(0o600);
    const record = JSON.parse(
      await readFile(path.join(stateDir(), "matoolkit-cli.auth-record.json"), "utf8"),
    );
    expect(record).toMatchObject({ username: authority.username, tenantId: authority.tenantId, clientId });
    const cache = await readFile(path.join(stateDir(), "matoolkit-cli.cache.json"), "utf8");
    // The refresh token of the last grant: what the next process must present (the fake rotates them).
    expect(cache).toContain(`"secret":"fake-refresh-token-2"`);
    expect(cache).not.toContain("fake-refresh-token-1");
  });

  it("later processes are silent: status and API calls refresh from the cached refresh token", async () => {
    const status = await cli("auth", "status", "--json");
    expect(status.stderr).toBe("");
    expect(status.code).toBe(0);
    const shown = JSON.parse(status.stdout);
    expect(shown).toMatchObject({
      mode: "entra",
      signedIn: true,
      account: authority.username,
      tenantId: authority.tenantId,
    });
    expect(Date.parse(shown.expiresOn)).toBeGreaterThan(Date.now());
    expect(status.stdout).not.toContain("fake-access-token");

    const call = await cli("runbook", "list", "--json");
    expect(call.stderr).toBe("");
    expect(JSON.parse(call.stdout)).toEqual([]);
    expect(authority.apiBearerTokens()).toEqual([expect.stringMatching(/^fake-access-token-\d+$/)]);
    expect(authority.deviceCodeRequests()).toBe(1);
    expect(authority.grants().slice(3)).toEqual(["refresh_token", "refresh_token"]);
  });

  it("does not use the saved sign-in for another tenant", async () => {
    const other = "0b5a2c11-59e4-4c9d-9a51-6f0ab3d3f2a1";
    const result = await runCliProcess(["runbook", "list"], { ...env, MATOOLKIT_CLI_TENANT_ID: other });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error auth.login_required: the saved sign-in is for tenant ${authority.tenantId}, not ${other}: run \`matoolkit auth login\`\n`,
    );
  });

  it("logout deletes the cache and the account; the next call asks for a login again", async () => {
    const logout = await cli("auth", "logout");
    expect(logout.code).toBe(0);
    expect(logout.stdout).toBe(
      "Signed out (removed matoolkit-cli.cache.json, matoolkit-cli.auth-record.json).\n",
    );
    expect(await readdir(stateDir())).toEqual([]);
    expect((await cli("runbook", "list")).stderr).toMatch(/^error auth\.login_required: /);
  });

  it("names the missing setting when entra mode lacks the tenant, the client or the scope (exit 2)", async () => {
    const result = await runCliProcess(["auth", "login"], { ...env, MATOOLKIT_API_SCOPE: "" });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "error config.missing: auth-mode entra needs api-scope: `matoolkit config set api-scope api://<api-client-id>/.default`, MATOOLKIT_API_SCOPE or --api-scope\n",
    );
  });
});
