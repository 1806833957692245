import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrCreateLocalSigningKey } from "@matoolkit/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../run.ts";
import { createApiClient } from "./api-client.ts";

/**
 * Every write the CLI sends carries an `Idempotency-Key` (issue 31): a new random key per
 * request, the same key on each of the CLI's retries after a dropped connection, none on reads.
 * Against an API stand-in whose connection can be made to fail; the API's side (replaying the
 * first answer) is tested in admin-api's idempotency tests.
 */
let scratch: string;
let env: Record<string, string>;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "matoolkit-cli-idempotency-"));
  const dataDir = join(scratch, "data");
  await loadOrCreateLocalSigningKey(dataDir);
  env = {
    HOME: join(scratch, "home"),
    MATOOLKIT_CONFIG: join(scratch, "config.json"),
    MATOOLKIT_API_URL: "http://matoolkit.test/api",
    MATOOLKIT_DATA_DIR: dataDir,
  };
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Attempt {
  readonly method: string;
  readonly url: string;
  readonly key: string | null;
}

/** fetch's failure when the connection drops before an answer, as undici reports it. */
function connectionReset(): Error {
  return Object.assign(new TypeError("fetch failed"), {
    cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
  });
}

/** A stand-in that fails the first `failures` attempts at the connection, then answers `body`. */
function standIn(failures: number | Error[], body: unknown = { batchId: 7, cancelled: {} }) {
  const attempts: Attempt[] = [];
  const errors = Array.isArray(failures) ? [...failures] : Array.from({ length: failures }, connectionReset);
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    attempts.push({ method: init?.method ?? "GET", url: String(input), key: headers.get("idempotency-key") });
    const error = errors.shift();
    if (error !== undefined) throw error;
    return new Response(JSON.stringify(body), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }) as typeof fetch;
  return { attempts, fetchFn };
}

async function run(args: string[], fetchFn: typeof fetch) {
  const pauses: number[] = [];
  let stderr = "";
  const code = await runCli(args, {
    env,
    cwd: scratch,
    home: env.HOME!,
    stdout: { write: () => undefined },
    stderr: { write: (text: string) => (stderr += text) },
    fetch: fetchFn,
    sleep: async (ms) => {
      pauses.push(ms);
    },
    now: () => new Date(),
  });
  return { code, stderr, pauses };
}

const cancelView = { batchId: 7, cancelled: { phases: 1, steps: 2, inits: 0 } };

describe("Idempotency-Key on the CLI's writes", () => {
  it("sends a random key with a write, and a new one for each invocation", async () => {
    const first = standIn(0, cancelView);
    expect((await run(["batch", "cancel", "7"], first.fetchFn)).code).toBe(0);
    const second = standIn(0, cancelView);
    expect((await run(["batch", "cancel", "7"], second.fetchFn)).code).toBe(0);

    expect(first.attempts).toEqual([
      { method: "POST", url: "http://matoolkit.test/api/batches/7/cancel", key: expect.stringMatching(UUID) },
    ]);
    expect(second.attempts[0]!.key).toMatch(UUID);
    expect(second.attempts[0]!.key).not.toBe(first.attempts[0]!.key);
  });

  it("reuses the key when it sends the request again after a dropped connection", async () => {
    const api = standIn(2, cancelView);
    const result = await run(["batch", "cancel", "7"], api.fetchFn);

    expect(result.code).toBe(0);
    expect(result.pauses).toEqual([500, 2000]);
    expect(api.attempts).toHaveLength(3);
    expect(api.attempts.map((attempt) => attempt.key)).toEqual(Array(3).fill(api.attempts[0]!.key));
    expect(api.attempts[0]!.key).toMatch(UUID);
  });

  it("gives up after two retries with the network error, every attempt with the same key", async () => {
    const api = standIn(3);
    const result = await run(["batch", "cancel", "7"], api.fetchFn);

    expect(result.code).toBe(1);
    expect(result.stderr).toContain("cannot reach the admin API at http://matoolkit.test/api (ECONNRESET)");
    expect(new Set(api.attempts.map((attempt) => attempt.key)).size).toBe(1);
    expect(api.attempts).toHaveLength(3);
  });

  it("does not send a timed-out request again", async () => {
    const timeout = Object.assign(new Error("The operation was aborted due to timeout"), {
      name: "TimeoutError",
    });
    const api = standIn([timeout]);
    const result = await run(["batch", "cancel", "7"], api.fetchFn);

    expect(result.code).toBe(1);
    expect(result.stderr).toContain("did not answer within 120 s");
    expect(api.attempts).toHaveLength(1);
    expect(result.pauses).toEqual([]);
  });

  it("sends no key with a read, and retries it the same way", async () => {
    const api = standIn(1, { items: [], total: 0 });
    const result = await run(["--json", "batch", "list"], api.fetchFn);

    expect(result.code).toBe(0);
    expect(api.attempts.map((attempt) => [attempt.method, attempt.key])).toEqual([
      ["GET", null],
      ["GET", null],
    ]);
  });

  it("gives each write of one client its own key (PUT, PATCH and DELETE too)", async () => {
    const api = standIn(0, {});
    const client = createApiClient({
      baseUrl: "http://matoolkit.test/api",
      tokens: { token: async () => "t" },
      fetch: api.fetchFn,
      sleep: async () => {},
    });
    for (const method of ["POST", "POST", "PUT", "PATCH", "DELETE"]) await client.json(method, "/x");
    const keys = api.attempts.map((attempt) => attempt.key);
    expect(keys.every((key) => key !== null && UUID.test(key))).toBe(true);
    expect(new Set(keys).size).toBe(5);
  });
});
