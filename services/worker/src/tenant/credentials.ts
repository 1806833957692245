import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";
import {
  ClientCertificateCredential,
  ClientSecretCredential,
  type AccessToken,
  type ClientSecretCredentialOptions,
  type GetTokenOptions,
  type TokenCredential,
} from "@azure/identity";
import { SecretClient, type SecretClientOptions } from "@azure/keyvault-secrets";
import forge from "node-forge";
import { MatoolkitError, NonRetriableError, reasonCodes, sanitizeErrorMessage } from "@matoolkit/domain";
import {
  createAzureCredential,
  describeAzureCredential,
  type AzureCredentialPlan,
} from "@matoolkit/platform";
import { azureCloud } from "./azure-clouds.ts";
import { tenantEnvVariables as v, type EntraTenantConfig, type SecretValue } from "./tenant-config.ts";

/**
 * 000 "Cloud Worker -> Graph/EXO: certificate auth, app registration (target tenant), PFX from
 * Key Vault". One TokenCredential per tenant, built at start-up: a certificate that cannot be
 * read, a wrong PFX password or a Key Vault that refuses fails the start, not the first job.
 *
 * Private keys stay in memory: a PFX is converted to PEM with node-forge (the PowerShell worker's
 * EphemeralKeySet), never written to disk. Secrets, keys and tokens never reach an error message.
 */

/** Where a certificate came from, for error messages: the variable(s) to fix, never the content. */
interface CertificateSource {
  /** e.g. `MATOOLKIT_CLIENT_CERTIFICATE_PATH (/secrets/app.pfx)`. */
  readonly label: string;
  /** The variable holding the PFX/key password, when there is one to blame. */
  readonly passwordVariable?: string;
}

function certificateError(message: string): NonRetriableError {
  return new NonRetriableError(reasonCodes.tenantAuthFailed, message);
}

/**
 * Reads `MATOOLKIT_CLIENT_CERTIFICATE_PATH`: PEM (certificate + private key, the key possibly
 * encrypted) or PFX/PKCS#12, recognised by content whatever the file is called. Returns the PEM
 * that ClientCertificateCredential takes: an unencrypted PKCS#8 key, then the certificate whose
 * public key matches it, then the rest of the chain (the credential takes its thumbprint from the
 * first certificate).
 */
export async function readClientCertificate(path: string, password?: SecretValue): Promise<string> {
  const source: CertificateSource = {
    label: `${v.certificatePath} (${path})`,
    passwordVariable: v.certificatePassword,
  };
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw certificateError(`${source.label}: cannot read the file (${code})`);
  }
  return certificatePemFromBytes(bytes, password?.reveal(), source);
}

/** PEM text or PKCS#12 bytes, told apart by content. */
export function certificatePemFromBytes(
  bytes: Uint8Array,
  password: string | undefined,
  source: CertificateSource,
): string {
  const text = Buffer.from(bytes).toString("latin1");
  if (text.includes("-----BEGIN ")) return normalizePem(text, password, source);
  // DER PKCS#12 is an ASN.1 SEQUENCE: first byte 0x30.
  if (bytes[0] === 0x30) return pemFromPkcs12(bytes, password, source);
  throw certificateError(
    `${source.label}: neither a PEM certificate with its private key nor a PFX/PKCS#12 file`,
  );
}

/**
 * PKCS#12 → PEM in memory with node-forge (RSA keys, which is what Entra app certificates and
 * Key Vault's default policy use). An absent password is tried as the empty one, as Key Vault
 * exports its PFX without a password.
 */
export function pemFromPkcs12(
  der: Uint8Array,
  password: string | undefined,
  source: CertificateSource,
): string {
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    const asn1 = forge.asn1.fromDer(forge.util.createBuffer(Buffer.from(der).toString("binary")));
    p12 = openPkcs12(asn1, password);
  } catch (error) {
    const text = error instanceof Error ? error.message : "";
    // forge: "PKCS#12 MAC could not be verified. Invalid password?" (or a decryption failure).
    if (/mac could not be verified|invalid password|decrypt/iu.test(text)) {
      const fix = source.passwordVariable
        ? password === undefined
          ? `set ${source.passwordVariable}`
          : `${source.passwordVariable} is wrong`
        : "the PFX must have no password";
      throw certificateError(`${source.label}: the PFX could not be opened: ${fix}`);
    }
    throw certificateError(
      `${source.label}: neither a PEM certificate with its private key nor a readable PFX/PKCS#12 file`,
    );
  }
  const { pkcs8ShroudedKeyBag, keyBag, certBag } = forge.pki.oids as Record<string, string>;
  const bags = (type: string): forge.pkcs12.Bag[] => p12.getBags({ bagType: type })[type] ?? [];
  const keys = [...bags(pkcs8ShroudedKeyBag!), ...bags(keyBag!)];
  const certificates = bags(certBag!);
  const key = keys.find((bag) => bag.key !== undefined)?.key;
  if (key === undefined) {
    // forge reads RSA keys only; an EC key bag comes back without `key`.
    const why = keys.length > 0 ? "its private key is not RSA" : "it holds no private key";
    throw certificateError(`${source.label}: the PFX cannot be used: ${why}`);
  }
  const keyPem = forge.pki.privateKeyInfoToPem(forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(key)));
  const certificatePems = certificates.flatMap((bag) =>
    bag.cert ? [forge.pki.certificateToPem(bag.cert)] : [],
  );
  return normalizePem([keyPem, ...certificatePems].join("\n"), undefined, source);
}

/**
 * No password means the empty one (Windows, .NET and Key Vault exports) or none at all (OpenSSL
 * `-nodes -passout pass:` variants, forge's `null`): the MAC tells them apart, so try both.
 */
function openPkcs12(asn1: forge.asn1.Asn1, password: string | undefined): forge.pkcs12.Pkcs12Pfx {
  if (password !== undefined) return forge.pkcs12.pkcs12FromAsn1(asn1, false, password);
  try {
    return forge.pkcs12.pkcs12FromAsn1(asn1, false, "");
  } catch {
    return forge.pkcs12.pkcs12FromAsn1(asn1, false);
  }
}

/**
 * The value of a Key Vault certificate's secret (`GET {vault}/secrets/{name}`): base64 PFX with
 * content type `application/x-pkcs12` (no password), or PEM text with `application/x-pem-file`,
 * per the certificate's policy. Without a content type the value is recognised by content.
 */
export function pemFromKeyVaultSecret(value: string, contentType: string | undefined, label: string): string {
  const source: CertificateSource = { label };
  const type = contentType?.toLowerCase();
  if (type === "application/x-pem-file" || (type === undefined && value.includes("-----BEGIN "))) {
    return normalizePem(value, undefined, source);
  }
  if (type !== undefined && type !== "application/x-pkcs12") {
    throw certificateError(
      `${label}: unexpected content type ${sanitizeErrorMessage(type, 60)}; expected a certificate's secret`,
    );
  }
  const der = Buffer.from(value.replace(/\s+/gu, ""), "base64");
  if (der.length === 0) throw certificateError(`${label}: the secret is empty`);
  return pemFromPkcs12(der, undefined, source);
}

const pemBlock = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/gu;

/** PEM → `PRIVATE KEY` (PKCS#8, decrypted in memory) + leaf certificate + chain. */
function normalizePem(text: string, password: string | undefined, source: CertificateSource): string {
  const blocks = [...text.matchAll(pemBlock)].map((match) => ({ type: match[1]!, pem: match[0] }));
  const keyBlocks = blocks.filter((block) => block.type.endsWith("PRIVATE KEY"));
  const certificateBlocks = blocks.filter((block) => block.type === "CERTIFICATE");
  if (certificateBlocks.length === 0) throw certificateError(`${source.label}: the PEM holds no certificate`);
  if (keyBlocks.length === 0) throw certificateError(`${source.label}: the PEM holds no private key`);
  if (keyBlocks.length > 1)
    throw certificateError(`${source.label}: the PEM holds more than one private key`);

  const keyPem = keyBlocks[0]!.pem;
  const encrypted =
    keyBlocks[0]!.type === "ENCRYPTED PRIVATE KEY" || /Proc-Type:\s*4,ENCRYPTED/u.test(keyPem);
  let key: KeyObject;
  try {
    key = createPrivateKey(
      encrypted ? { key: keyPem, format: "pem", passphrase: password ?? "" } : { key: keyPem, format: "pem" },
    );
  } catch {
    if (encrypted) {
      const fix = source.passwordVariable
        ? password === undefined
          ? `set ${source.passwordVariable}`
          : `${source.passwordVariable} is wrong`
        : "it must not be encrypted";
      throw certificateError(
        `${source.label}: the private key is encrypted and could not be decrypted: ${fix}`,
      );
    }
    throw certificateError(`${source.label}: the private key is not readable`);
  }

  let certificates: X509Certificate[];
  try {
    certificates = certificateBlocks.map((block) => new X509Certificate(block.pem));
  } catch {
    throw certificateError(`${source.label}: a certificate in the PEM is not readable`);
  }
  const leafIndex = certificates.findIndex((certificate) => certificate.checkPrivateKey(key));
  if (leafIndex < 0) throw certificateError(`${source.label}: no certificate matches the private key`);
  const ordered = [certificates[leafIndex]!, ...certificates.filter((_, index) => index !== leafIndex)];
  const pkcs8 = key.export({ format: "pem", type: "pkcs8" }).toString();
  return [pkcs8.trim(), ...ordered.map((certificate) => certificate.toString().trim())].join("\n") + "\n";
}

/** What reads a Key Vault secret; the SDK's SecretClient in production, a stand-in in tests. */
export interface KeyVaultSecretReader {
  getSecret(name: string): Promise<{ value?: string; properties: { contentType?: string } }>;
}

export interface CredentialDeps {
  /** Builds the Key Vault reader; defaults to `new SecretClient(url, credential, options)`. */
  readonly keyVaultReader?: (vaultUrl: string, credential: TokenCredential) => KeyVaultSecretReader;
  /** Options for the default SecretClient (tests: a local stand-in over http). */
  readonly keyVaultClientOptions?: SecretClientOptions;
  /** The identity that reads the vault; default: the worker's own (`auth.identity`). */
  readonly keyVaultCredential?: TokenCredential;
  /**
   * Builds the worker's own identity from its plan (MATOOLKIT_AZURE_CREDENTIAL, see
   * @matoolkit/platform): for reading the vault and for `managed-identity` auth. Tests observe it.
   */
  readonly azureCredential?: (plan: AzureCredentialPlan) => Promise<TokenCredential>;
  /**
   * The HTTP client the app registration's credential (certificate or client secret) talks to
   * Entra ID with; default: @azure/identity's own. Tests answer the token endpoint with it, so the
   * real credential's requests (host, path, scope) can be observed without a network.
   */
  readonly identityHttpClient?: ClientSecretCredentialOptions["httpClient"];
}

/**
 * Fetches the certificate (with its private key) that Key Vault keeps as a secret of the same
 * name, and turns it into PEM. Verified against a stand-in speaking the documented REST API (the
 * challenge, then GET /secrets/{name}); what a real vault returns for each certificate policy is
 * from Microsoft's documentation only (see credentials.test.ts).
 */
export async function readKeyVaultCertificate(
  keyVaultUrl: string,
  certificateName: string,
  credential: TokenCredential,
  deps: CredentialDeps = {},
): Promise<string> {
  const label = `${v.keyVaultCertificateName} (${certificateName} in ${keyVaultUrl})`;
  const reader =
    deps.keyVaultReader?.(keyVaultUrl, credential) ??
    new SecretClient(keyVaultUrl, credential, deps.keyVaultClientOptions);
  let secret: Awaited<ReturnType<KeyVaultSecretReader["getSecret"]>>;
  try {
    secret = await reader.getSecret(certificateName);
  } catch (error) {
    throw new NonRetriableError(
      reasonCodes.tenantAuthFailed,
      `${label}: Key Vault refused: ${describeError(error)}`,
    );
  }
  if (secret.value === undefined || secret.value === "")
    throw certificateError(`${label}: the secret is empty`);
  return pemFromKeyVaultSecret(secret.value, secret.properties.contentType, label);
}

/** Reads only what identifies an error (its class, status, AADSTS code), never its body. */
function describeError(error: unknown, secrets: readonly string[] = []): string {
  if (!(error instanceof Error)) return "unknown error";
  const status = (error as { statusCode?: unknown }).statusCode;
  const code = (error as { code?: unknown }).code;
  let message = error.message;
  for (const secret of secrets) if (secret.length > 0) message = message.split(secret).join("[redacted]");
  // Azure identity messages end in trace/correlation ids and troubleshooting links: keep the gist.
  message = message.split(/\s+Trace ID:|\s+To troubleshoot/u)[0] ?? "";
  const parts = [
    error.name,
    typeof status === "number" ? `HTTP ${status}` : undefined,
    typeof code === "string" && !message.includes(code) ? code : undefined,
  ].filter((part) => part !== undefined);
  return sanitizeErrorMessage(`${parts.join(" ")}: ${message}`, 160);
}

/**
 * Wraps a credential so that a failed getToken is a `tenant.auth_failed` MatoolkitError naming
 * the tenant and auth kind, with a sanitized message (never a secret, a key or a token).
 * Refusals by Entra ID (HTTP 4xx: wrong secret, expired certificate, missing consent) will not
 * mend on retry; anything else (network, 5xx) may.
 */
export function guardCredential(
  inner: TokenCredential,
  label: string,
  secrets: readonly string[] = [],
): TokenCredential {
  return {
    async getToken(scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null> {
      try {
        const token = await inner.getToken(scopes, options);
        if (token === null) throw new Error("the credential returned no token");
        return token;
      } catch (error) {
        if (error instanceof MatoolkitError) throw error;
        const status = (error as { statusCode?: unknown } | null)?.statusCode;
        const permanent =
          (typeof status === "number" && status >= 400 && status < 500) ||
          (error instanceof Error && error.name === "CredentialUnavailableError");
        const scope = Array.isArray(scopes) ? scopes.join(" ") : scopes;
        const message = `No token for ${scope} from ${label}: ${describeError(error, secrets)}`;
        throw permanent
          ? new NonRetriableError(reasonCodes.tenantAuthFailed, message)
          : new MatoolkitError(reasonCodes.tenantAuthFailed, message);
      }
    },
  };
}

/**
 * A fixed bearer token (the simulated tenant accepts any non-empty one). Valid for an hour from
 * each call, so nothing ever tries to refresh it.
 */
export function staticTokenCredential(token: string): TokenCredential {
  if (token.length === 0) throw new RangeError("staticTokenCredential needs a non-empty token");
  return {
    getToken: async () => ({ token, expiresOnTimestamp: Date.now() + 3_600_000 }),
  };
}

/**
 * The target tenant's credential for every auth kind, wrapped by guardCredential. Reading the
 * certificate (file or Key Vault) happens here, so its mistakes stop the start-up.
 */
export async function createTenantCredential(
  config: EntraTenantConfig,
  deps: CredentialDeps = {},
): Promise<TokenCredential> {
  const { tenantId, clientId, auth } = config;
  const label = `tenant ${tenantId} (${auth.kind})`;
  // The cloud's Entra ID, always passed: without it @azure/identity falls back to the process's
  // AZURE_AUTHORITY_HOST (meant for the worker's own identity), then the public cloud.
  const appOptions = {
    authorityHost: azureCloud(config.cloud).authorityHost,
    ...(deps.identityHttpClient === undefined ? {} : { httpClient: deps.identityHttpClient }),
  };
  const hostCredential = deps.azureCredential ?? createAzureCredential;
  switch (auth.kind) {
    case "certificate": {
      const certificate = await readClientCertificate(auth.certificatePath, auth.certificatePassword);
      const secrets = auth.certificatePassword ? [auth.certificatePassword.reveal()] : [];
      return guardCredential(
        new ClientCertificateCredential(tenantId, clientId, { certificate }, appOptions),
        label,
        secrets,
      );
    }
    case "key-vault-certificate": {
      const vaultCredential =
        deps.keyVaultCredential ??
        guardCredential(
          await hostCredential(auth.identity),
          `the identity reading ${auth.keyVaultUrl} (${describeAzureCredential(auth.identity)})`,
        );
      const certificate = await readKeyVaultCertificate(
        auth.keyVaultUrl,
        auth.certificateName,
        vaultCredential,
        deps,
      );
      return guardCredential(
        new ClientCertificateCredential(tenantId, clientId, { certificate }, appOptions),
        label,
      );
    }
    case "client-secret": {
      const secret = auth.clientSecret.reveal();
      return guardCredential(new ClientSecretCredential(tenantId, clientId, secret, appOptions), label, [
        secret,
      ]);
    }
    case "managed-identity":
      // The identity's token is for the tenant it lives in: valid only when the worker runs in
      // the target tenant's subscription (see docs/worker-and-tenant.md). `clientId` (the app registration) is not
      // used: a managed identity is its own service principal. Which credential class stands for
      // the identity (managed, workload, or a developer's) follows MATOOLKIT_AZURE_CREDENTIAL; its
      // authority is the host's (IMDS, or AZURE_AUTHORITY_HOST for workload identity), which
      // tenant-config.ts checks against the cloud. The cloud still sets the scopes asked for.
      return guardCredential(await hostCredential(auth.identity), label);
    default: {
      const unreachable: never = auth;
      throw new Error(`Unknown auth kind ${JSON.stringify(unreachable)}`);
    }
  }
}
