import { randomBytes } from "node:crypto";

/**
 * The state behind the Key Vault simulator (key-vault-simulator.ts): secrets, each a list of
 * versions. What each field is follows the REST reference's SecretBundle and SecretItem:
 * https://learn.microsoft.com/rest/api/keyvault/secrets/set-secret/set-secret and
 * https://learn.microsoft.com/rest/api/keyvault/secrets/get-secret-versions/get-secret-versions
 */
export interface SimulatedSecretVersion {
  /** 32 lowercase hex digits, as the versions in the reference's samples (e.g. 4387e9f3d6e14c459867679a90fd0f79). */
  readonly version: string;
  readonly value: string;
  enabled: boolean;
  /** Unix time in whole seconds (`created`/`updated` are integers in the reference). */
  readonly created: number;
  updated: number;
  readonly contentType?: string;
  readonly tags?: Record<string, string>;
}

export class KeyVaultSecretStore {
  private readonly secrets = new Map<string, SimulatedSecretVersion[]>();

  /** `clock`: seconds since the epoch; tests move it to order versions. */
  constructor(private readonly clock: () => number = () => Math.floor(Date.now() / 1000)) {}

  /** "If the named secret already exists, Azure Key Vault creates a new version of that secret." (Set Secret) */
  set(
    name: string,
    input: { value: string; enabled?: boolean; contentType?: string; tags?: Record<string, string> },
  ): SimulatedSecretVersion {
    const now = this.clock();
    const version: SimulatedSecretVersion = {
      version: randomBytes(16).toString("hex"),
      value: input.value,
      enabled: input.enabled ?? true,
      created: now,
      updated: now,
      ...(input.contentType === undefined ? {} : { contentType: input.contentType }),
      ...(input.tags === undefined ? {} : { tags: input.tags }),
    };
    this.secrets.set(this.key(name), [...(this.secrets.get(this.key(name)) ?? []), version]);
    return version;
  }

  /** Versions in no documented order: here by version id, so a client cannot rely on creation order. */
  versions(name: string): readonly SimulatedSecretVersion[] | undefined {
    const versions = this.secrets.get(this.key(name));
    return versions === undefined
      ? undefined
      : [...versions].sort((a, b) => a.version.localeCompare(b.version));
  }

  /** A version by id; no version: the latest (Get Secret: "If not specified, the latest version"). */
  version(name: string, version: string): SimulatedSecretVersion | undefined {
    const versions = this.secrets.get(this.key(name)) ?? [];
    return version === "" ? versions.at(-1) : versions.find((candidate) => candidate.version === version);
  }

  /** What `az keyvault secret set-attributes --enabled false` does (Update Secret's attributes.enabled). */
  setEnabled(name: string, version: string, enabled: boolean): void {
    const found = this.version(name, version);
    if (found === undefined) throw new Error(`no version ${version} of ${name}`);
    found.enabled = enabled;
    found.updated = this.clock();
  }

  /** Key Vault object names are case-insensitive (https://learn.microsoft.com/azure/key-vault/general/about-keys-secrets-certificates#object-identifiers). */
  private key(name: string): string {
    return name.toLowerCase();
  }
}
