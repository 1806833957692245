import { createServer } from "node:net";
import type { AddressInfo } from "node:net";

/** A port that is free right now (for an app that starts after its sidecar). */
export async function reserveFreePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
