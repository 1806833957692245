import type { KeyVaultSecretStore, SimulatedSecretVersion } from "./key-vault-secret-store.ts";

/**
 * The Key Vault simulator's secret operations (key-vault-simulator.ts has the sources cited as
 * [set], [get], [versions], [errors]): what each answers and refuses.
 */
export class VaultError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly inner?: string,
  ) {
    super(message);
  }
}

export function setSecret(store: KeyVaultSecretStore, name: string, body: string): SimulatedSecretVersion {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new VaultError(400, "BadParameter", "The request body is not JSON.");
  }
  const input = parsed as {
    value?: unknown;
    contentType?: unknown;
    tags?: unknown;
    attributes?: { enabled?: unknown };
  };
  // [set]: value is required; about-secrets: "Key Vault secrets are limited to 25k bytes".
  if (typeof input.value !== "string")
    throw new VaultError(400, "BadParameter", "Property value is required.");
  if (Buffer.byteLength(input.value) > 25 * 1024)
    throw new VaultError(400, "BadParameter", "Secret value is too large.");
  const tags = input.tags as Record<string, unknown> | undefined;
  if (tags !== undefined && Object.values(tags).some((tag) => typeof tag !== "string")) {
    throw new VaultError(400, "BadParameter", "Tag values must be strings.");
  }
  return store.set(name, {
    value: input.value,
    ...(typeof input.attributes?.enabled === "boolean" ? { enabled: input.attributes.enabled } : {}),
    ...(typeof input.contentType === "string" ? { contentType: input.contentType } : {}),
    ...(tags === undefined ? {} : { tags: tags as Record<string, string> }),
  });
}

export function getSecret(store: KeyVaultSecretStore, name: string, version: string): SimulatedSecretVersion {
  const found = store.version(name, version);
  // azure-sdk-for-js#25489 (the service's 404 body): code SecretNotFound.
  if (found === undefined)
    throw new VaultError(
      404,
      "SecretNotFound",
      `A secret with (name/id) ${name}/${version} was not found in this key vault.`,
    );
  // azure-sdk-for-js#24756 (the service's answer): 403 Forbidden, inner code SecretDisabled.
  if (!found.enabled)
    throw new VaultError(
      403,
      "Forbidden",
      "Operation get is not allowed on a disabled secret.",
      "SecretDisabled",
    );
  return found;
}

export function listVersions(
  store: KeyVaultSecretStore,
  request: { base: string; name: string; url: URL; apiVersion: string },
  options: { pageSize?: number; absentSecretVersions?: "404" | "empty" },
): object {
  const { base, name, url, apiVersion } = request;
  const versions = store.versions(name);
  if (versions === undefined && (options.absentSecretVersions ?? "404") === "404") {
    throw new VaultError(
      404,
      "SecretNotFound",
      `A secret with (name/id) ${name} was not found in this key vault.`,
    );
  }
  // [versions]: maxresults 1..25; values never listed, only ids and attributes; nextLink to follow.
  const requested = Number(url.searchParams.get("maxresults") ?? "25");
  if (!Number.isInteger(requested) || requested < 1 || requested > 25) {
    throw new VaultError(400, "BadParameter", "maxresults must be between 1 and 25.");
  }
  const size = Math.min(requested, options.pageSize ?? 25);
  const skip = Number(url.searchParams.get("$skiptoken") ?? "0");
  const page = (versions ?? []).slice(skip, skip + size);
  const more = skip + size < (versions ?? []).length;
  return {
    value: page.map((version) => bundle(base, name, version, false)),
    nextLink: more
      ? `${base}/secrets/${name}/versions?api-version=${apiVersion}&$skiptoken=${skip + size}&maxresults=${requested}`
      : null,
  };
}

/** [set]/[get] SecretBundle, or with `withValue` false [versions]' SecretItem. */
export function bundle(
  base: string,
  name: string,
  version: SimulatedSecretVersion,
  withValue: boolean,
): object {
  return {
    ...(withValue ? { value: version.value } : {}),
    id: `${base}/secrets/${name}/${version.version}`,
    attributes: {
      enabled: version.enabled,
      created: version.created,
      updated: version.updated,
      recoveryLevel: "Recoverable",
      recoverableDays: 7,
    },
    ...(version.contentType === undefined ? {} : { contentType: version.contentType }),
    ...(version.tags === undefined ? {} : { tags: version.tags }),
  };
}
