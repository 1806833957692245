import { createLogger } from "@matoolkit/runtime";
import { createFixtureBase } from "../test/functions/contract/fixture-base.ts";
import type { TenantFixture } from "../test/functions/contract/tenant-fixture.ts";
import { createTenantClients } from "../src/tenant/create-tenant-clients.ts";
import { tenantConfigFromEnv } from "../src/tenant/tenant-config.ts";

export interface RealTenantFixture {
  readonly fixture: TenantFixture;
  close(): Promise<void>;
}

/**
 * The worker's own configuration (MATOOLKIT_TENANT=entra and its credential variables) plus
 * MATOOLKIT_TEST_DOMAIN, a verified domain of that tenant for the objects the suites create.
 * Refuses to run without them: a contract run that silently tested nothing would be worse than
 * none.
 */
export async function startRealTenantFixture(
  env: Readonly<Record<string, string | undefined>>,
): Promise<RealTenantFixture> {
  const config = tenantConfigFromEnv(env);
  if (config.mode !== "entra") {
    throw new Error("npm run test:tenant needs MATOOLKIT_TENANT=entra and its credentials (see README)");
  }
  const domain = env.MATOOLKIT_TEST_DOMAIN?.trim();
  if (!domain)
    throw new Error("npm run test:tenant needs MATOOLKIT_TEST_DOMAIN: a verified domain of the tenant");
  const built = await createTenantClients(config, {
    logger: createLogger({ level: "warn", name: "test-tenant" }),
  });
  // A real tenant replicates in seconds, not milliseconds.
  const base = createFixtureBase({ tenant: built.clients, domain, pollMs: 2_000, timeoutMs: 90_000 });
  return {
    fixture: base.fixture,
    close: async () => {
      const failures = await base.runCleanups();
      await built.close();
      if (failures.length > 0) {
        throw new Error(`Clean-up left objects in the tenant (${failures.length}): ${failures.join("; ")}`);
      }
    },
  };
}
