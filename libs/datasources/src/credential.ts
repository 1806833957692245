import type { TokenCredential } from "@azure/identity";
import type { DataSourceType } from "@matoolkit/domain";
import { DataSourceError } from "./datasource-error.ts";

export type CredentialProvider = () => Promise<TokenCredential>;

/**
 * DefaultAzureCredential is created on first use only: loading @azure/identity (MSAL) costs
 * start-up time that postgres- and csv-only deployments never need.
 */
export function lazyCredential(injected: TokenCredential | undefined): CredentialProvider {
  let credential: Promise<TokenCredential> | undefined = injected ? Promise.resolve(injected) : undefined;
  return () => {
    credential ??= import("@azure/identity").then(
      ({ DefaultAzureCredential }) => new DefaultAzureCredential(),
    );
    return credential;
  };
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
