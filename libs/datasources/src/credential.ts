import type { TokenCredential } from "@azure/identity";
import type { DataSourceType } from "@matoolkit/domain";
import { DataSourceError } from "./datasource-error.ts";

export type CredentialProvider = () => Promise<TokenCredential>;

/** No credential was given to createDataSourceClient: a wiring mistake, reported per query. */
class NoCredentialError extends Error {}

/**
 * The credential the entry point passed (`lazyAzureCredential` from @matoolkit/platform, which
 * loads @azure/identity on its first token request and follows MATOOLKIT_AZURE_CREDENTIAL).
 * There is deliberately no fallback to DefaultAzureCredential here: in production it would
 * silently run as whatever developer sign-in the host has, and a library cannot read the
 * environment to choose better. Postgres and csv sources never ask.
 */
export function lazyCredential(injected: TokenCredential | undefined): CredentialProvider {
  return injected === undefined
    ? () => Promise.reject(new NoCredentialError())
    : () => Promise.resolve(injected);
}

/** An Entra access token for `scope`; failures name the credential's error class, never its text. */
export async function getAccessToken(
  sourceType: DataSourceType,
  credentials: CredentialProvider,
  scope: string,
  signal: AbortSignal,
): Promise<string> {
  let token: { token: string } | null;
  try {
    const credential = await credentials();
    token = await credential.getToken(scope, { abortSignal: signal });
  } catch (error) {
    if (signal.aborted) throw signal.reason as Error;
    if (error instanceof NoCredentialError) {
      throw new DataSourceError(
        sourceType,
        "no Azure credential was configured for this process (the entry point passes one chosen by MATOOLKIT_AZURE_CREDENTIAL)",
        { retriable: false },
      );
    }
    // Credential chains explain every attempt at length (paths, environment): the class is enough here.
    const kind = error instanceof Error ? error.name : "unknown error";
    throw new DataSourceError(sourceType, `could not get an Entra access token for ${scope} (${kind})`, {
      cause: error,
    });
  }
  if (token === null || token.token === "") {
    throw new DataSourceError(sourceType, `could not get an Entra access token for ${scope} (no token)`);
  }
  return token.token;
}
