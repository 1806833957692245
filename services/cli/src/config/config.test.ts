import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliError } from "../errors.ts";
import { configFilePath, readConfigFile, writeConfigFile } from "./config-file.ts";
import { resolveConfig, settingsOf } from "./resolve-config.ts";

describe("resolveConfig", () => {
  const file = { "api-url": "http://file.example/api", role: "Reader" } as const;

  it("takes the flag over the environment over the config file over the default, and says which", () => {
    const config = resolveConfig({
      flags: { "api-url": "http://flag.example/api" },
      env: { MATOOLKIT_API_URL: "http://env.example/api", MATOOLKIT_AUTH_MODE: "entra" },
      file,
    });
    expect(config["api-url"]).toEqual({ value: "http://flag.example/api", source: "flag" });
    expect(config["auth-mode"]).toEqual({ value: "entra", source: "env" });
    expect(config.role).toEqual({ value: "Reader", source: "file" });
    expect(config["data-dir"]).toEqual({ value: ".matoolkit", source: "default" });
    expect(config["tenant-id"]).toEqual({ value: undefined, source: "unset" });
  });

  it("reads the CLI's own tenant and client variables, not the worker's MATOOLKIT_TENANT_ID/CLIENT_ID", () => {
    const tenant = "0b5a2c11-59e4-4c9d-9a51-6f0ab3d3f2a1";
    const config = resolveConfig({
      flags: {},
      env: {
        MATOOLKIT_TENANT_ID: "fabrikam.onmicrosoft.com",
        MATOOLKIT_CLIENT_ID: tenant,
        MATOOLKIT_CLI_TENANT_ID: tenant,
      },
      file: {},
    });
    expect(config["tenant-id"]).toEqual({ value: tenant, source: "env" });
    expect(config["client-id"]).toEqual({ value: undefined, source: "unset" });
  });

  it("treats an empty variable as unset", () => {
    const config = resolveConfig({ flags: {}, env: { MATOOLKIT_API_URL: "  " }, file });
    expect(config["api-url"]).toEqual({ value: "http://file.example/api", source: "file" });
  });

  it("names the flag or variable that holds a bad value, even one a higher source overrides", () => {
    expect(() => resolveConfig({ flags: { "auth-mode": "kerberos" }, env: {}, file: {} })).toThrow(
      "--auth-mode: must be one of local, entra",
    );
    expect(() =>
      resolveConfig({
        flags: { "api-url": "http://ok.example/api" },
        env: { MATOOLKIT_API_URL: "ftp://x" },
        file: {},
      }),
    ).toThrow("MATOOLKIT_API_URL: must be an http(s) URL");
    expect(() => resolveConfig({ flags: {}, env: { MATOOLKIT_CLI_CLIENT_ID: "my-app" }, file: {} })).toThrow(
      "MATOOLKIT_CLI_CLIENT_ID: must be the application (client) GUID",
    );
  });

  it("gives commands an absolute data dir (relative to the cwd) and an API URL without a trailing slash", () => {
    const settings = settingsOf(
      resolveConfig({ flags: { "api-url": "http://127.0.0.1:8080/api/" }, env: {}, file: {} }),
      "/srv/matoolkit",
    );
    expect(settings.apiUrl).toBe("http://127.0.0.1:8080/api");
    expect(settings.dataDir).toBe("/srv/matoolkit/.matoolkit");
    expect(settings.role).toBe("Admin");
    expect(settings.authMode).toBe("local");
  });
});

describe("config file", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "matoolkit-cli-config-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("lives in ~/.matoolkit/config.json (HOME) unless MATOOLKIT_CONFIG points elsewhere", () => {
    expect(configFilePath({}, "/home/ops", "/work")).toBe("/home/ops/.matoolkit/config.json");
    expect(configFilePath({ MATOOLKIT_CONFIG: "profiles/test.json" }, "/home/ops", "/work")).toBe(
      "/work/profiles/test.json",
    );
  });

  it("is written whole, owner-only, in an owner-only directory, and read back", async () => {
    const file = path.join(dir, "nested", "config.json");
    await writeConfigFile(file, { role: "Reader", "api-url": "http://x.example/api" });
    expect(await readConfigFile(file)).toEqual({ "api-url": "http://x.example/api", role: "Reader" });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(await readdir(path.dirname(file))).toEqual(["config.json"]);
    expect(await readFile(file, "utf8")).toBe(
      '{\n  "api-url": "http://x.example/api",\n  "role": "Reader"\n}\n',
    );
  });

  it("is empty when missing", async () => {
    expect(await readConfigFile(path.join(dir, "absent.json"))).toEqual({});
  });

  it.each([
    ["{ nope", /^config file .+ is not valid JSON: /],
    ['["api-url"]', /^config file .+ must hold a JSON object of settings$/],
    [
      '{"colour": "blue"}',
      /^config file .+: unknown key 'colour' \(allowed: api-url, auth-mode, data-dir, role, /,
    ],
    ['{"role": 3}', /^config file .+: key 'role' must be a string$/],
    ['{"role": "Owner"}', /^config file .+: key 'role': must be one of /],
  ])("refuses %s naming the file and the key, as a usage error", async (text, message) => {
    const file = path.join(dir, "config.json");
    await writeFile(file, text);
    const error = await readConfigFile(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).toMatch(message);
    expect((error as CliError).message).toContain(file);
  });
});
