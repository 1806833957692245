import { describe, expect, it } from "vitest";
import { createActionKeys, type WriteRequest } from "./action-keys.ts";

/** One Idempotency-Key per user action: kept for a retry after no answer, new for a new action. */
const pause: WriteRequest = { method: "POST", path: "/batches/7/pause", body: undefined };
const resume: WriteRequest = { method: "POST", path: "/batches/7/resume", body: undefined };
const upload = (csv: string): WriteRequest => ({ method: "POST", path: "/batches?runbook=pilot", body: csv });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("createActionKeys", () => {
  it("draws a random UUID per action", () => {
    const keys = createActionKeys();
    const first = keys.begin(pause);
    keys.answered(first);
    const second = keys.begin(pause);
    expect(first).toMatch(UUID);
    expect(second).toMatch(UUID);
    expect(second).not.toBe(first);
  });

  it("gives the same request retried after no answer the same key", () => {
    const keys = createActionKeys();
    const first = keys.begin(upload("a\n1\n"));
    // The network failed: not answered. The user clicks again, same file.
    expect(keys.begin(upload("a\n1\n"))).toBe(first);
    expect(keys.begin(upload("a\n1\n"))).toBe(first);
    keys.answered(first);
    expect(keys.begin(upload("a\n1\n"))).not.toBe(first);
  });

  it("gives another request a new key, and ends the unanswered action", () => {
    const keys = createActionKeys();
    const paused = keys.begin(pause);
    const resumed = keys.begin(resume);
    expect(resumed).not.toBe(paused);
    expect(keys.begin(upload("a\n2\n"))).not.toBe(keys.begin(upload("a\n3\n")));
    // A pause after the resume is a new action, even though the first pause got no answer.
    const again = keys.begin(pause);
    expect([paused, resumed]).not.toContain(again);
  });

  it("never takes a request with a body it cannot compare for a retry", () => {
    const keys = createActionKeys();
    const form = { method: "POST", path: "/files", body: undefined, opaqueBody: true };
    expect(keys.begin(form)).not.toBe(keys.begin(form));
  });

  it("spends only the key of the action that got its answer", () => {
    let next = 0;
    const keys = createActionKeys(() => `key-${(next += 1)}`);
    expect(keys.begin(pause)).toBe("key-1");
    keys.answered("key-0");
    expect(keys.begin(pause)).toBe("key-1");
    keys.answered("key-1");
    expect(keys.begin(pause)).toBe("key-2");
  });
});
