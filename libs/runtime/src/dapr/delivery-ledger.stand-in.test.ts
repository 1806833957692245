import { createStandInBroker, startStandInSidecar } from "@matoolkit/dapr-stand-in";
import { describeDeliveryLedger } from "../../test/dapr/delivery-ledger.suite.ts";
import { createDaprHttp } from "./dapr-http.ts";

/**
 * The ledger on the stand-in's state stores: Redis's first-write rules, and DynamoDB's, which
 * keeps an expired item and refuses first writes on it until its sweep (issue 14, finding 2).
 * The same suite runs on real daprd with Redis (delivery-ledger.real-dapr.test.ts).
 */
for (const stateStoreKind of ["redis", "dynamodb"] as const) {
  describeDeliveryLedger(`stand-in sidecar, ${stateStoreKind} state store`, async () => {
    const broker = createStandInBroker({ stateStoreKind });
    const sidecar = await startStandInSidecar({ broker, appId: "ledger-test", log: () => undefined });
    await sidecar.ready();
    return {
      http: createDaprHttp({ httpEndpoint: sidecar.url }),
      cleanup: async () => {
        await sidecar.stop();
        broker.close();
      },
    };
  });
}
