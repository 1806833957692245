import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString("utf8"));
      done();
    },
  });
  return {
    lines,
    destination,
    parsed: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe("createLogger", () => {
  it("redacts credentials and member data wherever callers usually put them", () => {
    const { lines, destination, parsed } = capture();
    const logger = createLogger({ level: "info", name: "worker", destination });

    logger.info(
      {
        connectionString: "postgres://app:s3cret@db/matoolkit",
        req: { headers: { authorization: "Bearer eyJhbGciOi.payload.sig" } },
        job: { JobId: "step-123-attempt-1", Parameters: { UserPrincipalName: "jdoe@contoso.com" } },
        member: { MemberKey: "jdoe@contoso.com", data_json: { DisplayName: "John Doe" } },
        result: { Result: { data: { Mail: "jdoe@contoso.com" } } },
        token: "abc123",
      },
      "job dispatched",
    );

    const [line] = lines;
    for (const secret of ["s3cret", "eyJhbGciOi", "jdoe@contoso.com", "John Doe", "abc123"]) {
      expect(line).not.toContain(secret);
    }
    // What operators need to correlate stays.
    expect(parsed()[0]).toMatchObject({
      name: "worker",
      msg: "job dispatched",
      job: { JobId: "step-123-attempt-1" },
    });
  });

  it("redacts one level down in a child's bindings too, without touching the caller's objects", () => {
    const { lines, destination, parsed } = capture();
    const logger = createLogger({ level: "info", name: "worker", destination });
    const job = { JobId: "step-7-attempt-1", Parameters: { UserPrincipalName: "jdoe@contoso.com" } };
    const list = [{ password: "in-an-array" }];
    logger.child({ job, secret: "top-level-secret" }).info({ list, count: 2 }, "job started");

    expect(lines[0]).not.toContain("jdoe@contoso.com");
    expect(lines[0]).not.toContain("top-level-secret");
    expect(parsed()[0]).toMatchObject({
      job: { JobId: "step-7-attempt-1", Parameters: "[redacted]" },
      secret: "[redacted]",
      count: 2,
    });
    // The objects logged are the caller's: censoring works on copies.
    expect(job.Parameters).toEqual({ UserPrincipalName: "jdoe@contoso.com" });
    // `*.key` names a key of an object value, not of an array's items (as pino's wildcard path).
    expect(parsed()[0]?.list).toEqual([{ password: "in-an-array" }]);
  });

  it("keeps an error an error when it carries a redacted key", () => {
    const { lines, destination, parsed } = capture();
    const logger = createLogger({ level: "info", name: "worker", destination });
    const err = Object.assign(new Error("Graph refused the call"), { token: "eyJ0eXAi.secret" });
    Object.defineProperty(err, "secret", { value: "read-only-secret", enumerable: true });
    logger.error({ err }, "call failed");

    expect(lines[0]).not.toContain("eyJ0eXAi");
    expect(lines[0]).not.toContain("read-only-secret");
    // Still serialized as an error (type and stack), by serializeErrorSafely.
    expect(parsed()[0]?.err).toMatchObject({ type: "Error", message: "Graph refused the call" });
    expect(err.token).toBe("eyJ0eXAi.secret");
  });

  it("logs errors with a sanitized message and their stack frames", () => {
    const { destination, parsed } = capture();
    const logger = createLogger({ level: "info", name: "orchestrator", destination });

    logger.error(
      { err: new Error("User jdoe@contoso.com not found, password=hunter2 rejected") },
      "step failed",
    );

    const err = parsed()[0]?.err as { type: string; message: string; stack: string };
    expect(err.type).toBe("Error");
    expect(err.message).toBe("User [email] not found, password=[redacted] rejected");
    expect(err.stack).toMatch(/^\s+at /u);
    expect(err.stack).not.toContain("jdoe");
  });

  it("writes nothing below its level", () => {
    const { lines, destination } = capture();
    createLogger({ level: "warn", name: "scheduler", destination }).info("tick");
    expect(lines).toEqual([]);
  });
});
