import type { MessageBus } from "@matoolkit/runtime";
import type { AdapterChoice } from "./platform-config.ts";

/**
 * The embedded bus records a settled delivery's outcome in the embedded idempotency store's table
 * (MessageBus.settleDelivery): with the idempotency port on another adapter (Dapr's state store)
 * that record would land where nobody reads it, so the capability is removed and the worker
 * records and publishes separately, through the ports it was given.
 */
export function withoutForeignSettlement(
  bus: MessageBus,
  adapters: Pick<AdapterChoice, "idempotency">,
): MessageBus {
  if (bus.settleDelivery === undefined || adapters.idempotency === "embedded") return bus;
  const { settleDelivery: _recordsElsewhere, ...rest } = bus;
  return rest;
}
