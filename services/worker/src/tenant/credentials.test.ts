import { createHash, createPrivateKey, generateKeyPairSync, X509Certificate } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClientCertificateCredential, type TokenCredential } from "@azure/identity";
import forge from "node-forge";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MatoolkitError, NonRetriableError, reasonCodes } from "@matoolkit/domain";
import { createAzureCredential, type AzureCredentialPlan } from "@matoolkit/platform";
import {
  createTenantCredential,
  guardCredential,
  pemFromKeyVaultSecret,
  readClientCertificate,
  readKeyVaultCertificate,
  staticTokenCredential,
} from "./credentials.ts";
import { SecretValue, tenantConfigFromEnv, type EntraTenantConfig } from "./tenant-config.ts";

const tenantId = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const clientId = "0f3c1d2e-1111-4222-8333-944455556666";
const uamiId = "11111111-2222-4333-8444-555566667777";
const pfxPassword = "Pfx-P@ssw0rd-42";

interface Issued {
  readonly key: forge.pki.rsa.PrivateKey;
  readonly cert: forge.pki.Certificate;
  readonly keyPem: string;
  readonly certPem: string;
}

/** An RSA key from Node (fast) and a self-signed certificate from node-forge. */
function issue(commonName: string, issuer?: Issued): Issued {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const keyPem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = `0${Math.floor(Math.random() * 1e9).toString(16)}`;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 365 * 86_400_000);
  const attrs = [{ name: "commonName", value: commonName }];
  cert.setSubject(attrs);
  cert.setIssuer(issuer ? issuer.cert.subject.attributes : attrs);
  cert.sign(issuer?.key ?? key, forge.md.sha256.create());
  return { key, cert, keyPem, certPem: forge.pki.certificateToPem(cert) };
}

function pfx(issued: Issued, password: string | null, chain: Issued[] = []): Buffer {
  const asn1 = forge.pkcs12.toPkcs12Asn1(issued.key, [issued.cert, ...chain.map((c) => c.cert)], password, {
    algorithm: "3des",
  });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), "binary");
}

/** What ClientCertificateCredential was given (a private field: its PEM is what we test). */
function certificateOf(credential: TokenCredential): string {
  const inner = credential as unknown as { certificateConfiguration?: { certificate?: string } };
  const pem = inner.certificateConfiguration?.certificate;
  if (pem === undefined) throw new Error("not a ClientCertificateCredential built from PEM text");
  return pem;
}

function sameCertificate(pem: string, expected: Issued): void {
  const first = new X509Certificate(pem);
  expect(first.fingerprint256).toBe(new X509Certificate(expected.certPem).fingerprint256);
  const key = createPrivateKey(pem);
  expect(first.checkPrivateKey(key)).toBe(true);
  expect(key.export({ format: "pem", type: "pkcs8" })).toBe(expected.keyPem);
}

let dir: string;
let leaf: Issued;
let ca: Issued;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "matoolkit-credentials-"));
  ca = issue("Contoso Test CA");
  leaf = issue("matoolkit-worker", ca);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(name: string, content: string | Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

function certificateConfig(path: string, password?: string): EntraTenantConfig {
  return {
    mode: "entra",
    tenantId,
    clientId,
    cloud: "AzureCloud",
    auth: {
      kind: "certificate",
      certificatePath: path,
      ...(password === undefined ? {} : { certificatePassword: new SecretValue(password) }),
    },
  };
}

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a failure");
}

describe("certificate from a file", () => {
  it.each([
    ["PEM, key first", async () => write("app.pem", `${leaf.keyPem}\n${leaf.certPem}`), undefined],
    [
      "PEM, chain before the leaf",
      async () => write("chain.pem", `${ca.certPem}${leaf.certPem}${leaf.keyPem}`),
      undefined,
    ],
    ["PFX with a password", async () => write("app.pfx", pfx(leaf, pfxPassword, [ca])), pfxPassword],
    [
      "PFX without a password (named .pem: content decides)",
      async () => write("nopass.pem", pfx(leaf, null)),
      undefined,
    ],
  ])(
    "%s gives a ClientCertificateCredential with the leaf certificate and its key",
    async (_, make, password) => {
      const path = await make();
      const credential = await createTenantCredential(certificateConfig(path, password));
      // Our wrapper around it:
      expect(credential).not.toBeInstanceOf(ClientCertificateCredential);

      // The PEM handed to the SDK: key + leaf first (the SDK takes the thumbprint from the first).
      const pem = await readClientCertificate(
        path,
        password === undefined ? undefined : new SecretValue(password),
      );
      sameCertificate(pem, leaf);
      expect(pem).not.toContain("ENCRYPTED");

      // And the SDK accepts it: the assertion it would sign uses the leaf's thumbprint.
      const sdk = new ClientCertificateCredential(tenantId, clientId, { certificate: pem });
      expect(certificateOf(sdk)).toBe(pem);
      const built = await (
        sdk as unknown as { buildClientCertificate(): Promise<{ thumbprint: string; privateKey: string }> }
      ).buildClientCertificate();
      const leafDer = Buffer.from(
        forge.asn1.toDer(forge.pki.certificateToAsn1(leaf.cert)).getBytes(),
        "binary",
      );
      expect(built.thumbprint).toBe(createHash("sha1").update(leafDer).digest("hex").toUpperCase());
    },
  );

  it("decrypts an encrypted PEM key in memory with the password", async () => {
    const encrypted = createPrivateKey(leaf.keyPem)
      .export({ format: "pem", type: "pkcs8", cipher: "aes-256-cbc", passphrase: pfxPassword })
      .toString();
    const path = await write("encrypted.pem", `${leaf.certPem}${encrypted}`);
    sameCertificate(await readClientCertificate(path, new SecretValue(pfxPassword)), leaf);

    const wrong = await failureOf(readClientCertificate(path, new SecretValue("not-it")));
    expect(wrong.message).toContain("MATOOLKIT_CLIENT_CERTIFICATE_PASSWORD is wrong");
    const missing = await failureOf(readClientCertificate(path));
    expect(missing.message).toContain("set MATOOLKIT_CLIENT_CERTIFICATE_PASSWORD");
  });

  it("fails a wrong PFX password naming the variable, never the password", async () => {
    const path = await write("wrong.pfx", pfx(leaf, pfxPassword));
    const error = await failureOf(createTenantCredential(certificateConfig(path, "Wr0ng-Guess-77")));

    expect(error).toBeInstanceOf(NonRetriableError);
    expect((error as MatoolkitError).reason).toBe(reasonCodes.tenantAuthFailed);
    expect(error.message).toContain("MATOOLKIT_CLIENT_CERTIFICATE_PASSWORD is wrong");
    expect(error.message).not.toContain("Wr0ng-Guess-77");
    expect(error.message).not.toContain(pfxPassword);

    const missing = await failureOf(createTenantCredential(certificateConfig(path)));
    expect(missing.message).toContain("set MATOOLKIT_CLIENT_CERTIFICATE_PASSWORD");
  });

  it.each([
    ["text.pem", "hello, I am not a certificate\n"],
    ["random.pfx", Buffer.from([0x30, 0x82, 0x01, 0x00, 0x02, 0x01, 0x03, 0xff, 0xee])],
    ["cert-only.pem", "PLACEHOLDER"],
  ])("fails a file that is not usable (%s), naming the path variable", async (name, content) => {
    const path = await write(name, content === "PLACEHOLDER" ? leaf.certPem : content);
    const error = await failureOf(createTenantCredential(certificateConfig(path)));
    expect(error.message).toContain(`MATOOLKIT_CLIENT_CERTIFICATE_PATH (${path})`);
    expect((error as MatoolkitError).reason).toBe(reasonCodes.tenantAuthFailed);
  });

  it("fails a missing file naming the path variable", async () => {
    const error = await failureOf(createTenantCredential(certificateConfig(join(dir, "absent.pfx"))));
    expect(error.message).toMatch(
      /MATOOLKIT_CLIENT_CERTIFICATE_PATH \(.*absent\.pfx\): cannot read the file \(ENOENT\)/,
    );
  });

  it("refuses a PEM whose certificate does not match its key", async () => {
    const path = await write("mismatch.pem", `${ca.certPem}${leaf.keyPem}`);
    const error = await failureOf(readClientCertificate(path));
    expect(error.message).toContain("no certificate matches the private key");
  });
});

describe("certificate from Key Vault", () => {
  /**
   * A stand-in for Key Vault's secrets REST API, as documented ("Get Secret", and "Authentication
   * in Key Vault": the SDK first sends the request without a token and expects 401 with a
   * `WWW-Authenticate: Bearer authorization=…, resource=…` challenge). Verified here: the SDK's
   * challenge handshake, the request path and version, the scope and tenant it asks the
   * credential for, and our conversion of both secret content types. Only from the docs: that a
   * real vault answers exactly so, and that a certificate's secret holds the PFX (base64, no
   * password, `application/x-pkcs12`) or PEM (`application/x-pem-file`) with the private key
   * when the key is exportable.
   */
  let server: Server;
  let vaultUrl: string;
  const requests: Array<{ url: string; authorization: string | undefined }> = [];
  const secrets = new Map<string, { value: string; contentType: string }>();

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response) => {
      requests.push({ url: request.url ?? "", authorization: request.headers.authorization });
      if (request.headers.authorization === undefined) {
        response.writeHead(401, {
          "WWW-Authenticate": `Bearer authorization="https://login.microsoftonline.com/${tenantId}", resource="https://vault.azure.net"`,
        });
        response.end();
        return;
      }
      const match = /^\/secrets\/([^/?]+)\/?\?api-version=/u.exec(decodeURIComponent(request.url ?? ""));
      const secret = match ? secrets.get(match[1]!) : undefined;
      response.setHeader("content-type", "application/json");
      if (secret === undefined) {
        response.writeHead(404);
        response.end(
          JSON.stringify({
            error: {
              code: "SecretNotFound",
              message: "A secret with (name/id) x was not found in this key vault.",
            },
          }),
        );
        return;
      }
      response.end(
        JSON.stringify({
          value: secret.value,
          contentType: secret.contentType,
          id: `${vaultUrl}/secrets/${match![1]}/0123456789abcdef`,
          attributes: { enabled: true },
          managed: true,
          kid: `${vaultUrl}/keys/${match![1]}/0123456789abcdef`,
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    vaultUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    secrets.set("pfx-cert", {
      value: pfx(leaf, "", [ca]).toString("base64"),
      contentType: "application/x-pkcs12",
    });
    secrets.set("pem-cert", {
      value: `${leaf.keyPem}${leaf.certPem}${ca.certPem}`,
      contentType: "application/x-pem-file",
    });
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const tokenRequests: Array<{ scopes: string | string[]; tenantId: string | undefined }> = [];
  const vaultIdentity: TokenCredential = {
    getToken: async (scopes, options) => {
      tokenRequests.push({ scopes, tenantId: options?.tenantId });
      return { token: "vault-token", expiresOnTimestamp: Date.now() + 3_600_000 };
    },
  };
  // The stand-in is plain http on 127.0.0.1, which a real vault URL never is (config requires https).
  const standIn = {
    keyVaultCredential: vaultIdentity,
    keyVaultClientOptions: { allowInsecureConnection: true, disableChallengeResourceVerification: true },
  };

  it.each([["pfx-cert"], ["pem-cert"]])("reads %s through the SDK's challenge handshake", async (name) => {
    requests.length = 0;
    tokenRequests.length = 0;
    const pem = await readKeyVaultCertificate(vaultUrl, name, vaultIdentity, standIn);
    sameCertificate(pem, leaf);

    expect(requests.map((r) => r.url.split("?")[0])).toEqual([`/secrets/${name}/`, `/secrets/${name}/`]);
    expect(decodeURIComponent(requests[0]!.url)).toMatch(/\?api-version=\d{4}-\d{2}-\d{2}/u);
    expect(requests[0]!.authorization).toBeUndefined();
    expect(requests[1]!.authorization).toBe("Bearer vault-token");
    expect(tokenRequests).toEqual([{ scopes: ["https://vault.azure.net/.default"], tenantId }]);
  });

  it("builds the tenant credential from the vault's certificate", async () => {
    const credential = await createTenantCredential(
      {
        mode: "entra",
        tenantId,
        clientId,
        cloud: "AzureCloud",
        auth: {
          kind: "key-vault-certificate",
          keyVaultUrl: vaultUrl,
          certificateName: "pfx-cert",
          identity: { kind: "managed-identity" },
        },
      },
      standIn,
    );
    expect(credential.getToken).toBeTypeOf("function");
  });

  it("reads the vault as the worker's own identity, chosen by the shared policy", async () => {
    requests.length = 0;
    tokenRequests.length = 0;
    // ACA with a user-assigned identity: the plan comes from the environment, as at start-up.
    const config = tenantConfigFromEnv({
      MATOOLKIT_TENANT: "entra",
      MATOOLKIT_TENANT_ID: tenantId,
      MATOOLKIT_CLIENT_ID: clientId,
      MATOOLKIT_TENANT_AUTH: "key-vault-certificate",
      MATOOLKIT_KEY_VAULT_URL: "https://matoolkit-kv.vault.azure.net",
      MATOOLKIT_KEY_VAULT_CERTIFICATE_NAME: "pem-cert",
      MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID: uamiId,
      IDENTITY_ENDPOINT: "http://localhost:42356/msi/token",
    }) as EntraTenantConfig;
    const plans: AzureCredentialPlan[] = [];
    await createTenantCredential(
      // The stand-in vault instead of the configured one (plain http on loopback).
      { ...config, auth: { ...config.auth, keyVaultUrl: vaultUrl } as EntraTenantConfig["auth"] },
      {
        keyVaultClientOptions: standIn.keyVaultClientOptions,
        azureCredential: async (plan) => {
          plans.push(plan);
          return vaultIdentity;
        },
      },
    );
    expect(plans).toEqual([{ kind: "managed-identity", clientId: uamiId }]);
    expect(requests.at(-1)?.authorization).toBe("Bearer vault-token");
  });

  it("asks the SecretClient for the configured name, and names the variable when it is absent", async () => {
    const asked: string[] = [];
    const error = await failureOf(
      readKeyVaultCertificate("https://kv.vault.azure.net", "no-such-cert", vaultIdentity, {
        keyVaultReader: (url, credential) => {
          expect(url).toBe("https://kv.vault.azure.net");
          expect(credential).toBe(vaultIdentity);
          return {
            getSecret: async (secretName) => {
              asked.push(secretName);
              throw Object.assign(new Error("A secret with (name/id) no-such-cert was not found"), {
                name: "RestError",
                statusCode: 404,
                code: "SecretNotFound",
              });
            },
          };
        },
      }),
    );
    expect(asked).toEqual(["no-such-cert"]);
    expect(error.message).toContain(
      "MATOOLKIT_KEY_VAULT_CERTIFICATE_NAME (no-such-cert in https://kv.vault.azure.net)",
    );
    expect(error.message).toContain("HTTP 404");
    expect((error as MatoolkitError).reason).toBe(reasonCodes.tenantAuthFailed);
  });

  it("through the real SDK, a 404 from the vault names the variable", async () => {
    const error = await failureOf(readKeyVaultCertificate(vaultUrl, "absent", vaultIdentity, standIn));
    expect(error.message).toContain("MATOOLKIT_KEY_VAULT_CERTIFICATE_NAME (absent in");
    expect(error.message).toContain("404");
  });

  it("converts secret values by content type, or by content when there is none", () => {
    const base64Pfx = pfx(leaf, "").toString("base64");
    sameCertificate(pemFromKeyVaultSecret(base64Pfx, "application/x-pkcs12", "test"), leaf);
    sameCertificate(pemFromKeyVaultSecret(base64Pfx, undefined, "test"), leaf);
    sameCertificate(pemFromKeyVaultSecret(`${leaf.certPem}${leaf.keyPem}`, undefined, "test"), leaf);
    expect(() => pemFromKeyVaultSecret("plain text", "text/plain", "KV x")).toThrow(
      /KV x: unexpected content type/,
    );
    expect(() => pemFromKeyVaultSecret("bm90IGEgcGZ4", "application/x-pkcs12", "KV x")).toThrow(
      /KV x: neither/,
    );
  });
});

describe("the worker's own identity (managed-identity auth)", () => {
  const entra = {
    MATOOLKIT_TENANT: "entra",
    MATOOLKIT_TENANT_ID: tenantId,
    MATOOLKIT_CLIENT_ID: clientId,
    MATOOLKIT_TENANT_AUTH: "managed-identity",
  };

  /** The credential class createTenantCredential builds for this environment (no token is asked). */
  async function classFor(env: Record<string, string>): Promise<{ name: string; clientId?: string }> {
    const built: TokenCredential[] = [];
    await createTenantCredential(tenantConfigFromEnv({ ...entra, ...env }) as EntraTenantConfig, {
      azureCredential: async (plan) => {
        const credential = await createAzureCredential(plan);
        built.push(credential);
        return credential;
      },
    });
    expect(built).toHaveLength(1);
    const [credential] = built;
    return { name: credential!.constructor.name, clientId: (credential as { clientId?: string }).clientId };
  }

  it("is the managed identity on ACA or App Service, user-assigned when one is named", async () => {
    expect(await classFor({ IDENTITY_ENDPOINT: "http://localhost:42356/msi/token" })).toEqual({
      name: "ManagedIdentityCredential",
      clientId: undefined,
    });
    expect(await classFor({ MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID: uamiId })).toEqual({
      name: "ManagedIdentityCredential",
      clientId: uamiId,
    });
  });

  it("is workload identity on AKS, and the developer chain only where nothing says deployed", async () => {
    const aks = {
      AZURE_CLIENT_ID: uamiId,
      AZURE_TENANT_ID: tenantId,
      AZURE_FEDERATED_TOKEN_FILE: "/var/run/secrets/azure/tokens/azure-identity-token",
    };
    expect((await classFor(aks)).name).toBe("WorkloadIdentityCredential");
    expect((await classFor({})).name).toBe("DefaultAzureCredential");
    expect(
      (await classFor({ IDENTITY_ENDPOINT: "http://x", MATOOLKIT_AZURE_CREDENTIAL: "development" })).name,
    ).toBe("DefaultAzureCredential");
  });
});

describe("guardCredential", () => {
  it("turns an Entra refusal into a non-retriable tenant.auth_failed without secrets", async () => {
    const secret = "s3cr3t~Value.With-Chars";
    const inner: TokenCredential = {
      getToken: async () => {
        throw Object.assign(
          new Error(
            `AADSTS7000215: Invalid client secret provided (${secret}). Trace ID: abc Correlation ID: def`,
          ),
          { name: "AuthenticationError", statusCode: 401 },
        );
      },
    };
    const error = await failureOf(
      guardCredential(inner, `tenant ${tenantId} (client-secret)`, [secret]).getToken(
        "https://graph.microsoft.com/.default",
      ),
    );

    expect(error).toBeInstanceOf(NonRetriableError);
    expect((error as MatoolkitError).reason).toBe(reasonCodes.tenantAuthFailed);
    expect(error.message).toContain(`tenant ${tenantId} (client-secret)`);
    expect(error.message).toContain("AADSTS7000215");
    expect(error.message).toContain("HTTP 401");
    expect(error.message).not.toContain(secret);
    expect(error.message).not.toContain("Trace ID");
  });

  it("keeps a network failure retriable and redacts a token quoted in it", async () => {
    const inner: TokenCredential = {
      getToken: async () => {
        throw new Error("connect ECONNREFUSED, last token=eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln");
      },
    };
    const error = await failureOf(guardCredential(inner, "tenant t (managed-identity)").getToken("scope"));
    expect(error).toBeInstanceOf(MatoolkitError);
    expect(error).not.toBeInstanceOf(NonRetriableError);
    expect(error.message).not.toContain("eyJ");
  });

  it("passes tokens through", async () => {
    await expect(guardCredential(staticTokenCredential("abc"), "x").getToken("s")).resolves.toMatchObject({
      token: "abc",
    });
  });
});

describe("staticTokenCredential", () => {
  it("answers the same token, valid for a while, and refuses an empty one", async () => {
    const token = await staticTokenCredential("simulated").getToken("https://graph.microsoft.com/.default");
    expect(token?.token).toBe("simulated");
    expect(token!.expiresOnTimestamp).toBeGreaterThan(Date.now() + 60_000);
    expect(() => staticTokenCredential("")).toThrow(RangeError);
  });
});
