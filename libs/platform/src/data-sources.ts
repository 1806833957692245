import { createDataSourceClient, csvDirFromEnv, type DataSourceClient } from "@matoolkit/datasources";
import { azureCredentialPlanFromEnv } from "./azure-credential-plan.ts";
import { lazyAzureCredential } from "./azure-credential.ts";

/**
 * The data source client of the scheduler's ticks and the admin API's query preview, for entry
 * points: runbooks name environment variables for their connections, csv paths are relative to
 * MATOOLKIT_CSV_DIR, Dataverse and Databricks run as the identity MATOOLKIT_AZURE_CREDENTIAL
 * chooses (a bad value stops the start).
 */
export function dataSourcesFromEnv(
  env: Record<string, string | undefined>,
  dataDir: string,
): DataSourceClient {
  return createDataSourceClient({
    env,
    baseDir: csvDirFromEnv(env, dataDir),
    credential: lazyAzureCredential(azureCredentialPlanFromEnv(env)),
  });
}
