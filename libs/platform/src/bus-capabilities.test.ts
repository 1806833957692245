import type { MessageBus } from "@matoolkit/runtime";
import { describe, expect, it } from "vitest";
import { withoutForeignSettlement } from "./bus-capabilities.ts";

const bus: MessageBus = {
  publish: async () => {},
  publishMany: async () => {},
  settleDelivery: async () => true,
  declareSubscription: async () => {},
  subscribe: async () => {},
  deadLetters: async () => [],
  stop: async () => {},
};

describe("bus capabilities at boot", () => {
  it("keeps settleDelivery only where the idempotency store is the embedded one it records into", () => {
    expect(withoutForeignSettlement(bus, { idempotency: "embedded" }).settleDelivery).toBe(
      bus.settleDelivery,
    );
    const mixed = withoutForeignSettlement(bus, { idempotency: "dapr" });
    expect(mixed.settleDelivery).toBeUndefined();
    expect(mixed.publish).toBe(bus.publish);
    expect(mixed.subscribe).toBe(bus.subscribe);
  });
});
