import { readdir } from "node:fs/promises";
import path from "node:path";
import {
  AuthenticationRequiredError,
  AzureAuthorityHosts,
  DeviceCodeCredential,
  useIdentityPlugin,
  type AuthenticationRecord,
} from "@azure/identity";
import { CliError, exitCodes } from "../../errors.ts";
import { removeIfPresent } from "../../private-files.ts";
import type { TokenSource } from "../token-source.ts";
import { loadAuthRecord, removeAuthRecord, saveAuthRecord } from "./auth-record-store.ts";
import { fileCachePersistence } from "./file-token-cache.ts";

/** 000: the persistent token cache is named `matoolkit-cli`. */
export const TOKEN_CACHE_NAME = "matoolkit-cli";

export interface EntraSettings {
  readonly tenantId: string;
  readonly clientId: string;
  readonly scope: string;
  readonly authorityHost: string;
  /** Holds the token cache and the account record (the config file's directory). */
  readonly stateDir: string;
}

export interface EntraToken {
  readonly token: string;
  readonly expiresOn: Date;
}

// The token cache persistence is process-wide in @azure/identity; register ours once per directory.
let persistenceDir: string | undefined;

function registerFileCache(stateDir: string): void {
  if (persistenceDir === stateDir) return;
  useIdentityPlugin((context) => {
    // The plugin contract (@azure/identity plugins/provider.d.ts, AzurePluginContext): the same
    // hook @azure/identity-cache-persistence uses, here backed by a private file.
    const control = (context as { cachePluginControl: { setPersistence(factory: unknown): void } })
      .cachePluginControl;
    control.setPersistence(fileCachePersistence(stateDir));
  });
  persistenceDir = stateDir;
}

const microsoftHosts = new Set<string>(
  Object.values(AzureAuthorityHosts).map((host) => new URL(host).origin),
);

function credential(
  settings: EntraSettings,
  record: AuthenticationRecord | undefined,
  prompt: (message: string) => void = () => undefined,
): DeviceCodeCredential {
  registerFileCache(settings.stateDir);
  return new DeviceCodeCredential({
    tenantId: settings.tenantId,
    clientId: settings.clientId,
    authorityHost: settings.authorityHost,
    // MSAL validates unknown authorities against Microsoft's instance discovery; a private or
    // test authority (ADFS-like, a local fake) is trusted as configured instead.
    disableInstanceDiscovery: !microsoftHosts.has(new URL(settings.authorityHost).origin),
    tokenCachePersistenceOptions: { enabled: true, name: TOKEN_CACHE_NAME },
    authenticationRecord: record,
    // Only `auth login` may prompt: any other command fails with "run auth login" instead of
    // blocking a script on a device code nobody will enter.
    disableAutomaticAuthentication: true,
    userPromptCallback: (info) => prompt(info.message),
  });
}

/** `auth login`: the device-code flow, then the account saved so later commands are silent. */
export async function signIn(
  settings: EntraSettings,
  prompt: (message: string) => void,
): Promise<{ record: AuthenticationRecord; token: EntraToken }> {
  const login = credential(settings, undefined, prompt);
  const record = await login.authenticate(settings.scope).catch((error: unknown) => {
    throw signInError(error);
  });
  if (record === undefined) {
    throw new CliError(exitCodes.failed, "auth.failed", "Entra ID sign-in returned no account");
  }
  await saveAuthRecord(settings.stateDir, record);
  return { record, token: await silentToken(settings, record) };
}

/** A token for the API from the cache (refreshed with the refresh token when it has expired). */
export async function silentToken(
  settings: EntraSettings,
  record?: AuthenticationRecord,
): Promise<EntraToken> {
  const account = record ?? (await signedInAccount(settings));
  try {
    const token = await credential(settings, account).getToken(settings.scope);
    return { token: token.token, expiresOn: new Date(token.expiresOnTimestamp) };
  } catch (error) {
    if (error instanceof AuthenticationRequiredError) {
      throw new CliError(
        exitCodes.failed,
        "auth.login_required",
        `the Entra ID sign-in of ${account.username} has expired or does not cover ${settings.scope}: run \`matoolkit auth login\``,
      );
    }
    throw signInError(error);
  }
}

async function signedInAccount(settings: EntraSettings): Promise<AuthenticationRecord> {
  const record = await loadAuthRecord(settings.stateDir);
  if (record === undefined) {
    throw new CliError(
      exitCodes.failed,
      "auth.login_required",
      "not signed in to Entra ID: run `matoolkit auth login`",
    );
  }
  if (record.clientId !== settings.clientId) {
    throw new CliError(
      exitCodes.failed,
      "auth.login_required",
      `the saved sign-in is for client-id ${record.clientId}, not ${settings.clientId}: run \`matoolkit auth login\``,
    );
  }
  // A tenant given as a domain cannot be compared with the record's GUID; Entra checks it then.
  if (
    guidPattern.test(settings.tenantId) &&
    record.tenantId.toLowerCase() !== settings.tenantId.toLowerCase()
  ) {
    throw new CliError(
      exitCodes.failed,
      "auth.login_required",
      `the saved sign-in is for tenant ${record.tenantId}, not ${settings.tenantId}: run \`matoolkit auth login\``,
    );
  }
  return record;
}

const guidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function savedAccount(stateDir: string): Promise<AuthenticationRecord | undefined> {
  return loadAuthRecord(stateDir);
}

export function entraTokenSource(settings: EntraSettings): TokenSource {
  return {
    // MSAL keeps the token in memory and in the cache; asking again is cheap and renews it in time.
    token: async () => (await silentToken(settings)).token,
  };
}

/** `auth logout`: the account record and every token cache file of this CLI. */
export async function signOut(stateDir: string): Promise<string[]> {
  const removed: string[] = [];
  const names = await readdir(stateDir).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.startsWith(`${TOKEN_CACHE_NAME}.`) && n.endsWith(".cache.json"))) {
    if (await removeIfPresent(path.join(stateDir, name))) removed.push(name);
  }
  if (await removeAuthRecord(stateDir)) removed.push("matoolkit-cli.auth-record.json");
  return removed;
}

/** Entra's messages name the failure (AADSTS codes); they never hold the tokens. */
function signInError(error: unknown): CliError {
  const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
  return new CliError(exitCodes.failed, "auth.failed", `Entra ID sign-in failed: ${message}`);
}
