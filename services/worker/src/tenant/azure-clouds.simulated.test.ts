import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import forge from "node-forge";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@matoolkit/runtime";
import { startSimulatedTenant, type SimulatedTenant } from "@matoolkit/simulated-tenant";
import { createFixtureBase } from "../../test/functions/contract/fixture-base.ts";
import { createGroup, createUser } from "../../test/functions/entra/entra-contract-objects.ts";
import { createEntraFunctions } from "../functions/entra/index.ts";
import { createTenantClients, type BuiltTenantClients } from "./create-tenant-clients.ts";
import type { CredentialDeps } from "./credentials.ts";
import type { GraphClient, GraphRequest } from "./graph-client.ts";
import { tenantConfigFromEnv } from "./tenant-config.ts";

/**
 * MATOOLKIT_AZURE_CLOUD end to end, on the worker's real code: the config, the real
 * @azure/identity ClientSecretCredential (MSAL), the real Graph and Exchange adapters and the
 * Add-EntraGroupMember function. Only the two services are stand-ins: Entra ID is answered through
 * the credential's HTTP client (recording where MSAL goes and which scope it asks for), and Graph
 * and Exchange Online are the simulated tenant, reached through the explicit base-URL overrides
 * (it answers on any URL). The expected values are written out here, not read from the table, so
 * a wrong row fails.
 */

interface CloudExpectation {
  /** Where the token requests go (the host MSAL sends them to for the configured authority). */
  readonly authorityHost: string;
  readonly graphScope: string;
  readonly exchangeScope: string;
  readonly graphRoot: string;
}

const clouds: Record<string, CloudExpectation> = {
  AzureCloud: {
    authorityHost: "login.microsoftonline.com",
    graphScope: "https://graph.microsoft.com/.default",
    exchangeScope: "https://outlook.office365.com/.default",
    graphRoot: "https://graph.microsoft.com",
  },
  AzureUSGovernment: {
    authorityHost: "login.microsoftonline.us",
    graphScope: "https://graph.microsoft.us/.default",
    exchangeScope: "https://outlook.office365.us/.default",
    graphRoot: "https://graph.microsoft.us",
  },
  AzureUSGovernmentDoD: {
    authorityHost: "login.microsoftonline.us",
    graphScope: "https://dod-graph.microsoft.us/.default",
    exchangeScope: "https://outlook-dod.office365.us/.default",
    graphRoot: "https://dod-graph.microsoft.us",
  },
  AzureChinaCloud: {
    // The configured authority is login.chinacloudapi.cn; MSAL sends its requests to that host's
    // preferred network alias, the same Entra ID (@azure/msal-common authority/AuthorityMetadata:
    // preferred_network "login.partner.microsoftonline.cn", aliases [..., "login.chinacloudapi.cn"]).
    authorityHost: "login.partner.microsoftonline.cn",
    graphScope: "https://microsoftgraph.chinacloudapi.cn/.default",
    exchangeScope: "https://partner.outlook.cn/.default",
    graphRoot: "https://microsoftgraph.chinacloudapi.cn",
  },
};

type IdentityHttpClient = NonNullable<CredentialDeps["identityHttpClient"]>;
type PipelineRequest = Parameters<IdentityHttpClient["sendRequest"]>[0];
type PipelineResponse = Awaited<ReturnType<IdentityHttpClient["sendRequest"]>>;

interface LoginRequest {
  readonly method: string;
  readonly url: URL;
  /** The `scope` of a token request (form body), undefined for metadata reads. */
  readonly scope?: string;
}

/** `HttpHeaders` of @azure/core-rest-pipeline, as much of it as the identity client reads. */
function headersOf(values: Record<string, string>): PipelineResponse["headers"] {
  const map = new Map(Object.entries(values).map(([name, value]) => [name.toLowerCase(), value]));
  return {
    get: (name: string) => map.get(name.toLowerCase()),
    has: (name: string) => map.has(name.toLowerCase()),
    set: (name: string, value: string | number | boolean) => void map.set(name.toLowerCase(), String(value)),
    delete: (name: string) => void map.delete(name.toLowerCase()),
    toJSON: () => Object.fromEntries(map),
    [Symbol.iterator]: () => map.entries(),
  } as PipelineResponse["headers"];
}

/**
 * Entra ID for one authority host, as the v2.0 endpoint answers: OpenID metadata for the tenant,
 * and client-credential tokens. Anything sent to another host is recorded and refused, so a
 * request that leaves the cloud shows in `requests`.
 */
function fakeEntraId(authorityHost: string): { client: IdentityHttpClient; requests: LoginRequest[] } {
  const requests: LoginRequest[] = [];
  const answer = (request: PipelineRequest, status: number, body: unknown): PipelineResponse => ({
    request,
    status,
    headers: headersOf({ "content-type": "application/json" }),
    bodyAsText: JSON.stringify(body),
  });
  const client: IdentityHttpClient = {
    sendRequest: async (request) => {
      const url = new URL(request.url);
      const form = typeof request.body === "string" ? new URLSearchParams(request.body) : undefined;
      requests.push({
        method: request.method,
        url,
        ...(form?.get("scope") ? { scope: form.get("scope")! } : {}),
      });
      if (url.host !== authorityHost) return answer(request, 400, { error: "wrong_cloud" });
      const tenant = url.pathname.split("/")[1]!;
      const root = `https://${authorityHost}/${tenant}`;
      if (url.pathname.endsWith("/v2.0/.well-known/openid-configuration")) {
        return answer(request, 200, {
          token_endpoint: `${root}/oauth2/v2.0/token`,
          authorization_endpoint: `${root}/oauth2/v2.0/authorize`,
          end_session_endpoint: `${root}/oauth2/v2.0/logout`,
          jwks_uri: `https://${authorityHost}/${tenant}/discovery/v2.0/keys`,
          issuer: `${root}/v2.0`,
        });
      }
      if (request.method === "POST" && url.pathname.endsWith("/oauth2/v2.0/token")) {
        return answer(request, 200, {
          token_type: "Bearer",
          expires_in: 3599,
          ext_expires_in: 3599,
          access_token: `token-for-${form?.get("scope") ?? "nothing"}`,
        });
      }
      return answer(request, 404, { error: "not_found" });
    },
  };
  return { client, requests };
}

/** The Graph port, recording what a function sends through it (then sending it on). */
function recording(graph: GraphClient, sent: GraphRequest[]): GraphClient {
  return {
    serviceRoot: graph.serviceRoot,
    request: (request, signal) => {
      sent.push(request);
      return graph.request(request, signal);
    },
  };
}

const logger = createLogger({ level: "silent", name: "azure-clouds-test" });
const signal = new AbortController().signal;
const clientId = "0f3c1d2e-1111-4222-8333-944455556666";

describe("MATOOLKIT_AZURE_CLOUD against the simulated tenant", () => {
  let simulator: SimulatedTenant;
  const built: BuiltTenantClients[] = [];
  beforeAll(async () => {
    simulator = await startSimulatedTenant({});
  });
  afterAll(async () => {
    for (const b of built) await b.close();
    await simulator.close();
  });

  async function workerFor(cloud: string, login: IdentityHttpClient): Promise<BuiltTenantClients> {
    const config = tenantConfigFromEnv({
      MATOOLKIT_TENANT: "entra",
      MATOOLKIT_TENANT_ID: simulator.tenantId,
      MATOOLKIT_CLIENT_ID: clientId,
      MATOOLKIT_TENANT_AUTH: "client-secret",
      MATOOLKIT_CLIENT_SECRET: "not-a-real-secret",
      MATOOLKIT_AZURE_CLOUD: cloud,
      // The explicit overrides win over the cloud's endpoints; the cloud's scopes stay.
      MATOOLKIT_GRAPH_BASE_URL: simulator.url,
      MATOOLKIT_EXCHANGE_BASE_URL: simulator.url,
    });
    const result = await createTenantClients(config, {
      logger,
      credentialDeps: { identityHttpClient: login },
    });
    built.push(result);
    return result;
  }

  it.each(Object.entries(clouds))(
    "%s: tokens from the cloud's Entra ID for its Graph and Exchange scopes, @odata.id on its Graph host",
    async (cloud, expected) => {
      const entra = fakeEntraId(expected.authorityHost);
      const worker = await workerFor(cloud, entra.client);

      // Both adapters reach the simulated tenant (the override) with the cloud's tokens.
      await worker.clients.graph.request({ method: "GET", path: "/users", query: { $top: "1" } }, signal);
      await worker.clients.exchange.invoke("Get-Recipient", { ResultSize: 1 }, signal);

      const tokenRequests = entra.requests.filter((request) => request.method === "POST");
      expect(tokenRequests.map((request) => `${request.url.origin}${request.url.pathname}`)).toEqual([
        `https://${expected.authorityHost}/${simulator.tenantId}/oauth2/v2.0/token`,
        `https://${expected.authorityHost}/${simulator.tenantId}/oauth2/v2.0/token`,
      ]);
      expect(tokenRequests.map((request) => request.scope)).toEqual([
        expected.graphScope,
        expected.exchangeScope,
      ]);
      // Nothing, metadata included, went to another cloud's login host.
      expect(new Set(entra.requests.map((request) => request.url.host))).toEqual(
        new Set([expected.authorityHost]),
      );

      // Add-EntraGroupMember names the member on the cloud's Graph host, and the tenant takes it.
      const sent: GraphRequest[] = [];
      const tenant = { ...worker.clients, graph: recording(worker.clients.graph, sent) };
      const base = createFixtureBase({
        tenant,
        domain: simulator.state.domains[0]!,
        pollMs: 20,
        timeoutMs: 5_000,
      });
      const user = await createUser(base.fixture);
      const groupId = await createGroup(base.fixture);
      const add = createEntraFunctions({ replicationGraceMs: 300 })["Add-EntraGroupMember"]!;
      expect(await add({ GroupId: groupId, UserId: user.id }, base.fixture.context())).toBe(true);
      const reference = sent.find((request) => request.path.endsWith("/members/$ref"));
      expect(reference?.body).toEqual({
        "@odata.id": `${expected.graphRoot}/v1.0/directoryObjects/${user.id}`,
      });
      expect(simulator.state.groups.get(groupId, "primary")?.members).toContain(user.id);
      expect(await base.runCleanups()).toEqual([]);
    },
  );

  it("certificate auth signs in at the cloud's authority too", async () => {
    const dir = await mkdtemp(join(tmpdir(), "matoolkit-clouds-"));
    try {
      const path = join(dir, "app.pem");
      await writeFile(path, selfSignedPem());
      const entra = fakeEntraId("login.microsoftonline.us");
      const config = tenantConfigFromEnv({
        MATOOLKIT_TENANT: "entra",
        MATOOLKIT_TENANT_ID: simulator.tenantId,
        MATOOLKIT_CLIENT_ID: clientId,
        MATOOLKIT_TENANT_AUTH: "certificate",
        MATOOLKIT_CLIENT_CERTIFICATE_PATH: path,
        MATOOLKIT_AZURE_CLOUD: "AzureUSGovernmentDoD",
        MATOOLKIT_GRAPH_BASE_URL: simulator.url,
        MATOOLKIT_EXCHANGE_BASE_URL: simulator.url,
      });
      const result = await createTenantClients(config, {
        logger,
        credentialDeps: { identityHttpClient: entra.client },
      });
      built.push(result);
      await result.clients.graph.request({ method: "GET", path: "/users", query: { $top: "1" } }, signal);
      const tokenRequests = entra.requests.filter((request) => request.method === "POST");
      expect(tokenRequests.map((request) => [request.url.host, request.scope])).toEqual([
        ["login.microsoftonline.us", "https://dod-graph.microsoft.us/.default"],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("without an override, each adapter goes to the cloud's own endpoint", async () => {
    const entra = fakeEntraId("login.microsoftonline.us");
    const hosts: string[] = [];
    const config = tenantConfigFromEnv({
      MATOOLKIT_TENANT: "entra",
      MATOOLKIT_TENANT_ID: simulator.tenantId,
      MATOOLKIT_CLIENT_ID: clientId,
      MATOOLKIT_TENANT_AUTH: "client-secret",
      MATOOLKIT_CLIENT_SECRET: "not-a-real-secret",
      MATOOLKIT_AZURE_CLOUD: "AzureUSGovernment",
    });
    // Exchange's fetch is injectable: it records the URL and answers as the service would.
    const result = await createTenantClients(config, {
      logger,
      credentialDeps: { identityHttpClient: entra.client },
      fetch: async (input) => {
        hosts.push(new URL(String(input)).toString());
        return new Response(JSON.stringify({ value: [] }), {
          headers: { "content-type": "application/json" },
        });
      },
    });
    built.push(result);
    await result.clients.exchange.invoke("Get-Recipient", { ResultSize: 1 }, signal);
    expect(hosts).toEqual([`https://outlook.office365.us/adminapi/beta/${simulator.tenantId}/InvokeCommand`]);
    expect(result.clients.graph.serviceRoot).toBe("https://graph.microsoft.us");
    expect(result.description).toMatch(/ in AzureUSGovernment$/u);
  });
});

/** A throwaway self-signed certificate with its RSA key, as PEM (what an app registration holds). */
function selfSignedPem(): string {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const keyPem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = "01";
  cert.validity.notBefore = new Date();
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  cert.setSubject([{ name: "commonName", value: "worker" }]);
  cert.setIssuer([{ name: "commonName", value: "worker" }]);
  cert.sign(key, forge.md.sha256.create());
  return `${keyPem}${forge.pki.certificateToPem(cert)}`;
}
