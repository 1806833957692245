import { describe, expect, it } from "vitest";
import { freePort, freePorts } from "./free-port.ts";

describe("freePorts", () => {
  it("hands out distinct ports, never one the caller already chose", async () => {
    const chosen = await freePort();
    // Many at once: the OS hands a just-closed port out again readily on loopback.
    const ports = await freePorts(64, [chosen]);
    expect(ports).toHaveLength(64);
    expect(new Set(ports).size).toBe(64);
    expect(ports).not.toContain(chosen);
  });
});
