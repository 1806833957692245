import { afterAll, beforeAll, describe } from "vitest";
import { entraContract } from "../test/functions/entra/entra.contract.ts";
import { exchangeContract } from "../test/functions/exchange/exchange.contract.ts";
import { startRealTenantFixture, type RealTenantFixture } from "./real-tenant-fixture.ts";

// The same suites `npm test` runs against the simulated tenant, here against the tenant the
// environment names. They create their own users, groups and mail users and remove them after.
let tenant: RealTenantFixture;
beforeAll(async () => {
  tenant = await startRealTenantFixture(process.env);
});
afterAll(async () => {
  await tenant?.close();
});

describe("Entra standard functions on a real tenant", () => {
  entraContract(() => tenant.fixture);
});

describe("Exchange standard functions on a real tenant", () => {
  exchangeContract(() => tenant.fixture);
});
