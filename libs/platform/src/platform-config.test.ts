import { describe, expect, it } from "vitest";
import { platformConfigFromEnv } from "./platform-config.ts";

const server = { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test" };

describe("platform configuration", () => {
  it("defaults to the embedded adapters on every port, with no Dapr settings", () => {
    const config = platformConfigFromEnv({});
    expect(config.adapters).toEqual({
      bus: "embedded",
      timers: "embedded",
      idempotency: "embedded",
      workflow: "embedded",
    });
    expect(config.dapr).toBeUndefined();
  });

  it("sizes the connection pool from MATOOLKIT_DB_POOL_SIZE and names the variable when it is not a size", () => {
    expect(platformConfigFromEnv({}).databasePoolSize).toBe(30);
    expect(platformConfigFromEnv({ MATOOLKIT_DB_POOL_SIZE: "64" }).databasePoolSize).toBe(64);
    expect(() => platformConfigFromEnv({ MATOOLKIT_DB_POOL_SIZE: "1" })).toThrow(/MATOOLKIT_DB_POOL_SIZE/);
    expect(() => platformConfigFromEnv({ MATOOLKIT_DB_POOL_SIZE: "many" })).toThrow(/MATOOLKIT_DB_POOL_SIZE/);
  });

  it("prepares repeated statements unless MATOOLKIT_DB_PREPARE turns it off", () => {
    expect(platformConfigFromEnv({}).databasePrepareStatements).toBe(true);
    expect(platformConfigFromEnv({ MATOOLKIT_DB_PREPARE: "off" }).databasePrepareStatements).toBe(false);
    expect(() => platformConfigFromEnv({ MATOOLKIT_DB_PREPARE: "sometimes" })).toThrow(
      /MATOOLKIT_DB_PREPARE/,
    );
  });

  it("applies the dapr and aca presets, and lets one port's variable override its preset", () => {
    expect(platformConfigFromEnv({ ...server, MATOOLKIT_RUNTIME: "dapr" }).adapters).toEqual({
      bus: "dapr",
      timers: "dapr-jobs",
      idempotency: "dapr",
      workflow: "dapr",
    });
    expect(platformConfigFromEnv({ ...server, MATOOLKIT_RUNTIME: "aca" }).adapters).toEqual({
      bus: "dapr",
      timers: "dapr-delayed-messages",
      idempotency: "dapr",
      workflow: "embedded",
    });
    const mixed = platformConfigFromEnv({
      ...server,
      MATOOLKIT_RUNTIME: "dapr",
      MATOOLKIT_WORKFLOW: "embedded",
    });
    expect(mixed.adapters.workflow).toBe("embedded");
    expect(mixed.adapters.bus).toBe("dapr");
  });

  it("reads the sidecar address from DAPR_HTTP_PORT as `dapr run` sets it, or DAPR_HTTP_ENDPOINT", () => {
    const fromPort = platformConfigFromEnv({
      ...server,
      MATOOLKIT_RUNTIME: "dapr",
      DAPR_HTTP_PORT: "3501",
      DAPR_GRPC_PORT: "50001",
      MATOOLKIT_DAPR_APP_PORT: "3001",
    });
    expect(fromPort.dapr).toMatchObject({
      httpEndpoint: "http://127.0.0.1:3501",
      grpcPort: 50001,
      appPort: 3001,
      pubsubName: "matoolkit-pubsub",
      stateStoreName: "matoolkit-state",
      jobsApiVersion: "v1.0-alpha1",
    });
    const fromEndpoint = platformConfigFromEnv({
      ...server,
      MATOOLKIT_RUNTIME: "aca",
      DAPR_HTTP_ENDPOINT: "http://dapr.internal:3500",
    });
    expect(fromEndpoint.dapr?.httpEndpoint).toBe("http://dapr.internal:3500");
  });

  it("publishes through Dapr's alpha bulk API except on Azure Container Apps, MATOOLKIT_DAPR_BULK_PUBLISH deciding", () => {
    // ACA does not guarantee Dapr's alpha APIs (learn.microsoft.com/azure/container-apps/dapr-overview).
    expect(platformConfigFromEnv({ ...server, MATOOLKIT_RUNTIME: "aca" }).dapr?.bulkPublish).toBe(false);
    expect(platformConfigFromEnv({ ...server, MATOOLKIT_RUNTIME: "dapr" }).dapr?.bulkPublish).toBe(true);
    expect(
      platformConfigFromEnv({ ...server, MATOOLKIT_RUNTIME: "dapr", MATOOLKIT_DAPR_BULK_PUBLISH: "false" })
        .dapr?.bulkPublish,
    ).toBe(false);
    expect(
      platformConfigFromEnv({ ...server, MATOOLKIT_RUNTIME: "aca", MATOOLKIT_DAPR_BULK_PUBLISH: "true" }).dapr
        ?.bulkPublish,
    ).toBe(true);
    expect(() =>
      platformConfigFromEnv({
        ...server,
        MATOOLKIT_RUNTIME: "aca",
        MATOOLKIT_DAPR_BULK_PUBLISH: "sometimes",
      }),
    ).toThrow(/MATOOLKIT_DAPR_BULK_PUBLISH/);
  });

  it("refuses combinations that cannot work, naming the variables", () => {
    expect(() =>
      platformConfigFromEnv({ ...server, MATOOLKIT_BUS: "dapr", MATOOLKIT_TIMERS: "embedded" }),
    ).toThrow(/MATOOLKIT_TIMERS: the Dapr bus needs a Dapr timers adapter/);
    expect(() => platformConfigFromEnv({ MATOOLKIT_RUNTIME: "dapr" })).toThrow(
      /DATABASE_URL: Dapr adapters run the services as separate apps/,
    );
    expect(() => platformConfigFromEnv({ ...server, MATOOLKIT_RUNTIME: "kubernetes" })).toThrow(
      /MATOOLKIT_RUNTIME: Invalid option: expected one of "embedded"\|"dapr"\|"aca"/,
    );
    expect(() =>
      platformConfigFromEnv({ ...server, MATOOLKIT_RUNTIME: "dapr", DAPR_HTTP_ENDPOINT: "ftp://sidecar" }),
    ).toThrow(/DAPR_HTTP_ENDPOINT/);
  });

  it("refuses a Dapr app listening beyond loopback without APP_API_TOKEN, and accepts it with one", () => {
    const dapr = { ...server, MATOOLKIT_RUNTIME: "dapr" };
    for (const host of ["0.0.0.0", "::", "10.0.0.4", "app.internal"]) {
      expect(() => platformConfigFromEnv({ ...dapr, MATOOLKIT_DAPR_APP_HOST: host })).toThrow(
        `APP_API_TOKEN: MATOOLKIT_DAPR_APP_HOST=${host} opens the sidecar callbacks beyond this host`,
      );
      expect(() =>
        platformConfigFromEnv({ ...dapr, MATOOLKIT_DAPR_APP_HOST: host, APP_API_TOKEN: "" }),
      ).toThrow(/APP_API_TOKEN/);
      const config = platformConfigFromEnv({ ...dapr, MATOOLKIT_DAPR_APP_HOST: host, APP_API_TOKEN: "t0k" });
      expect(config.dapr).toMatchObject({ appHost: host, appApiToken: "t0k" });
    }
    for (const host of ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"]) {
      expect(platformConfigFromEnv({ ...dapr, MATOOLKIT_DAPR_APP_HOST: host }).dapr?.appHost).toBe(host);
    }
    // Embedded mode opens no callback port at all.
    expect(() => platformConfigFromEnv({ MATOOLKIT_DAPR_APP_HOST: "0.0.0.0" })).not.toThrow();
  });
});
