import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DaprHttp } from "../../src/dapr/dapr-http.ts";
import { createDaprStateStore } from "../../src/dapr/dapr-state-store.ts";
import { createDeliveryLedger, type DeliveryLedger } from "../../src/dapr/delivery-ledger.ts";

export interface SidecarUnderTest {
  /** The sidecar's HTTP API, with its state store named `matoolkit-state`. */
  readonly http: DaprHttp;
  cleanup(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What the Dapr bus's delivery ledger (libs/runtime/src/dapr/delivery-ledger.ts) must do on a
 * sidecar's state store so the broker's copies of a message run its handler once, with the right
 * delivery count. Run on the stand-in's stores and on real daprd with Redis.
 */
export function describeDeliveryLedger(name: string, openSidecar: () => Promise<SidecarUnderTest>): void {
  describe(`delivery ledger: ${name}`, { timeout: 60_000 }, () => {
    let sidecar: SidecarUnderTest;
    let stateCalls = 0;
    beforeAll(async () => {
      sidecar = await openSidecar();
    });
    afterAll(async () => {
      await sidecar.cleanup();
    });

    const ledgerOf = (seconds: { remember?: number; lease?: number } = {}): DeliveryLedger => {
      const counted: DaprHttp = {
        address: sidecar.http.address,
        request: (request) => {
          stateCalls += 1;
          return sidecar.http.request(request);
        },
      };
      return createDeliveryLedger({
        state: createDaprStateStore(counted, "matoolkit-state"),
        rememberSeconds: seconds.remember ?? 600,
        leaseSeconds: seconds.lease ?? 60,
      });
    };
    const key = () => `orchestrator-events|sub|${randomUUID()}`;

    it("runs a first delivery in two sidecar calls, then acknowledges every copy without running it", async () => {
      const ledger = ledgerOf();
      const delivery = key();
      stateCalls = 0;
      expect(await ledger.begin(delivery)).toEqual({ kind: "run", attempt: 1 });
      await ledger.succeeded(delivery, 1);
      expect(stateCalls).toBe(2);

      expect(await ledger.begin(delivery)).toEqual({ kind: "duplicate" });
      expect(await ledgerOf().begin(delivery)).toEqual({ kind: "duplicate" });
      expect(await ledger.inspect(delivery)).toEqual({ handled: true, attempts: 1 });
    });

    it("answers busy to a copy while the first runs, and counts the attempts of failed runs", async () => {
      const ledger = ledgerOf();
      const delivery = key();
      expect(await ledger.begin(delivery)).toEqual({ kind: "run", attempt: 1 });
      expect(await ledger.begin(delivery)).toEqual({ kind: "busy" });
      await ledger.failed(delivery, 1);
      expect(await ledger.inspect(delivery)).toEqual({ handled: false, attempts: 1 });
      expect(await ledger.begin(delivery)).toEqual({ kind: "run", attempt: 2 });
      await ledger.succeeded(delivery, 2);
      expect(await ledger.begin(delivery)).toEqual({ kind: "duplicate" });
      expect(await ledger.inspect(delivery)).toEqual({ handled: true, attempts: 2 });
    });

    it("lets a copy run once the lease of a replica that died has run out", async () => {
      const ledger = ledgerOf({ lease: 1 });
      const delivery = key();
      expect(await ledger.begin(delivery)).toEqual({ kind: "run", attempt: 1 });
      await sleep(1_100);
      expect(await ledger.begin(delivery)).toEqual({ kind: "run", attempt: 2 });
    });

    it("forgets a handled delivery after the dedupe window", async () => {
      const ledger = ledgerOf({ remember: 1, lease: 1 });
      const delivery = key();
      expect(await ledger.begin(delivery)).toEqual({ kind: "run", attempt: 1 });
      await ledger.succeeded(delivery, 1);
      expect(await ledger.begin(delivery)).toEqual({ kind: "duplicate" });
      await sleep(2_100);
      expect(await ledger.inspect(delivery)).toBeUndefined();
      expect(await ledger.begin(delivery)).toEqual({ kind: "run", attempt: 1 });
    });

    it("reads a delivery recorded as done in its own key (by the version before the done key) as handled", async () => {
      const state = createDaprStateStore(sidecar.http, "matoolkit-state");
      const delivery = key();
      expect(await state.create(delivery, { state: "done", attempts: 3 }, 600)).toBe(true);
      const ledger = ledgerOf();
      expect(await ledger.begin(delivery)).toEqual({ kind: "duplicate" });
      expect(await ledger.inspect(delivery)).toEqual({ handled: true, attempts: 3 });
    });
  });
}
