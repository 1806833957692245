import { startLoginRecorder, type LoginRecorder } from "@matoolkit/testing";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import { startPgListener } from "../pg-listener.ts";
import { installBusSchema } from "./install-bus-schema.ts";

// Passwordless PostgreSQL (DATABASE_AUTH=entra): besides the service's pool (libs/platform's
// test), the bus opens connections of its own: pg-boss's pool, the schema install's client and
// the LISTEN connections. Each must log in with the password function, not the URL.
let recorder: LoginRecorder | undefined;
afterEach(async () => {
  await recorder?.close();
  recorder = undefined;
});

const tokens = () => {
  let issued = 0;
  return async () => `token-${++issued}`;
};

describe("bus connections with a password function", () => {
  it("pg-boss and the schema install log in with the function's password", async () => {
    recorder = await startLoginRecorder();
    await expect(installBusSchema(recorder.url, tokens())).rejects.toThrow(
      /login refused by the test recorder/,
    );
    expect(recorder.passwords).toContain("token-1");
    expect(recorder.passwords).not.toContain("");
  });

  it("the LISTEN connection logs in with the function's password", async () => {
    recorder = await startLoginRecorder();
    await expect(
      startPgListener({
        connectionString: recorder.url,
        password: tokens(),
        channel: "matoolkit_test",
        onNotification: () => {},
        logger: createLogger({ level: "silent", name: "test" }),
      }),
    ).rejects.toThrow(/login refused by the test recorder/);
    expect(recorder.passwords).toEqual(["token-1"]);
  });
});
