import { openRealSidecar } from "@matoolkit/dapr-harness";
import { describeDeliveryLedger } from "../../test/dapr/delivery-ledger.suite.ts";
import { createDaprHttp } from "./dapr-http.ts";

/**
 * The ledger on REAL daprd (MATOOLKIT_DAPR_VERSION, default the newest pinned) with
 * components/local's Redis state store on a redis-server of the test's own: components-contrib's
 * state.redis first-write and ETag rules, not the stand-in's reading of them.
 */
const version = process.env.MATOOLKIT_DAPR_VERSION ?? "newest";

describeDeliveryLedger(`real daprd (${version}), Redis state store`, async () => {
  const fixture = await openRealSidecar({ version, env: process.env });
  return {
    http: createDaprHttp({ httpEndpoint: fixture.httpEndpoint }),
    cleanup: () => fixture.close(),
  };
});
