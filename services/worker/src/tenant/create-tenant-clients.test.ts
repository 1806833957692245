import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import forge from "node-forge";
import { afterAll, describe, expect, it } from "vitest";
import { MatoolkitError, reasonCodes } from "@matoolkit/domain";
import { createLogger } from "@matoolkit/runtime";
import { startSimulatedTenant } from "@matoolkit/simulated-tenant";
import { createTenantClients, type BuiltTenantClients } from "./create-tenant-clients.ts";
import { tenantConfigFromEnv } from "./tenant-config.ts";

const logger = createLogger({ level: "silent", name: "tenant-clients-test" });
const seedPath = new URL("../../../../examples/fabrikam-tenant.json", import.meta.url).pathname;
const built: BuiltTenantClients[] = [];
const signal = new AbortController().signal;

afterAll(async () => {
  for (const b of built) await b.close();
});

async function build(env: Record<string, string>): Promise<BuiltTenantClients> {
  const result = await createTenantClients(tenantConfigFromEnv(env), { logger });
  built.push(result);
  return result;
}

function urlOf(description: string): string {
  const match = /at (http:\/\/[^\s)]+)/u.exec(description);
  if (!match) throw new Error(`no URL in "${description}"`);
  return match[1]!;
}

async function requestCounts(url: string): Promise<{ graph: number; exchange: number }> {
  return (await (await fetch(`${url}/_simulator/requests`)).json()) as { graph: number; exchange: number };
}

/** Sends one call through each client; whatever the simulator answers, it must have seen them. */
async function touchBoth(result: BuiltTenantClients): Promise<void> {
  await result.clients.graph
    .request({ method: "GET", path: "/users", query: { $top: "1" } }, signal)
    .catch(() => {});
  await result.clients.exchange.invoke("Get-Recipient", { ResultSize: 1 }, signal).catch(() => {});
}

describe("createTenantClients", () => {
  it("none: every tenant call fails with tenant.not_configured, saying what to set", async () => {
    const result = await build({});
    expect(result.description).toMatch(/no target tenant/);
    const error = await result.clients.graph
      .request({ method: "GET", path: "/users" }, signal)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MatoolkitError);
    expect((error as MatoolkitError).reason).toBe(reasonCodes.tenantNotConfigured);
    expect((error as Error).message).toContain("MATOOLKIT_TENANT");
    await expect(result.clients.exchange.invoke("Get-Mailbox", {}, signal)).rejects.toThrow(
      /MATOOLKIT_TENANT/,
    );
  });

  it("simulated: starts a seeded simulator in-process with its settings, and both clients reach it", async () => {
    const result = await build({
      MATOOLKIT_TENANT: "simulated",
      MATOOLKIT_SIMULATED_TENANT_SEED: seedPath,
      MATOOLKIT_SIMULATED_REPLICATION_DELAY_MS: "250",
    });
    expect(result.description).toMatch(
      /^simulated tenant 5f1c2d3e-0a1b-4c2d-8e3f-9a0b1c2d3e4f at http:\/\/127\.0\.0\.1:\d+ \(in-process, seed .*fabrikam-tenant\.json, replication delay 250 ms\)$/u,
    );
    const url = urlOf(result.description);
    const settings = (await (await fetch(`${url}/_simulator/settings`)).json()) as Record<string, unknown>;
    expect(settings).toMatchObject({ replicationDelayMs: 250, throttleRate: 0 });
    const state = (await (await fetch(`${url}/_simulator/state`)).json()) as { users: unknown[] };
    expect(state.users.length).toBeGreaterThan(0);

    await touchBoth(result);
    expect(await requestCounts(url)).toMatchObject({ graph: 1, exchange: 1 });

    await result.close();
    await result.close(); // idempotent
    await expect(fetch(`${url}/_simulator/settings`)).rejects.toThrow();
  });

  it("simulated: MATOOLKIT_SIMULATED_PROFILE=chaos starts the in-process simulator with the chaos profile", async () => {
    const result = await build({
      MATOOLKIT_TENANT: "simulated",
      MATOOLKIT_SIMULATED_PROFILE: "chaos",
      MATOOLKIT_SIMULATED_RANDOM_SEED: "7",
    });
    expect(result.description).toMatch(
      /\(in-process, empty, profile chaos, random seed 7, replication delay 400 ms\)$/u,
    );
    const settings = (await (await fetch(`${urlOf(result.description)}/_simulator/settings`)).json()) as any;
    expect(settings).toMatchObject({
      replicationDelayMs: 400,
      behaviours: { replicaReads: "flapping", writeLagMs: 1_500, exchangeConcurrencyRate: 0.1 },
    });
    await result.close();
  });

  it("simulated: connects to a running simulator and learns its tenant id", async () => {
    const simulator = await startSimulatedTenant({});
    try {
      const result = await build({
        MATOOLKIT_TENANT: "simulated",
        MATOOLKIT_SIMULATED_TENANT_URL: simulator.url,
      });
      expect(result.description).toBe(`simulated tenant ${simulator.tenantId} at ${simulator.url}`);
      await touchBoth(result);
      expect(await requestCounts(simulator.url)).toMatchObject({ graph: 1, exchange: 1 });
      await result.close();
      // Not ours to stop.
      expect((await fetch(`${simulator.url}/_simulator/settings`)).ok).toBe(true);
    } finally {
      await simulator.close();
    }
  });

  it("simulated: a URL where nothing answers fails naming the variable", async () => {
    await expect(
      build({ MATOOLKIT_TENANT: "simulated", MATOOLKIT_SIMULATED_TENANT_URL: "http://127.0.0.1:9" }),
    ).rejects.toThrow(
      /MATOOLKIT_SIMULATED_TENANT_URL: no simulated tenant answers at http:\/\/127\.0\.0\.1:9/,
    );
  });

  it("simulated: an unreadable seed fails naming the variable", async () => {
    await expect(
      build({ MATOOLKIT_TENANT: "simulated", MATOOLKIT_SIMULATED_TENANT_SEED: "/nonexistent/seed.json" }),
    ).rejects.toThrow(/^MATOOLKIT_SIMULATED_TENANT_SEED: /);
  });

  it("entra: builds the credential and both adapters, describing the tenant without secrets", async () => {
    const dir = await mkdtemp(join(tmpdir(), "matoolkit-tenant-clients-"));
    try {
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
      const path = join(dir, "app.pem");
      await writeFile(path, `${keyPem}${forge.pki.certificateToPem(cert)}`);

      const result = await build({
        MATOOLKIT_TENANT: "entra",
        MATOOLKIT_TENANT_ID: "fabrikam.onmicrosoft.com",
        MATOOLKIT_CLIENT_ID: "0f3c1d2e-1111-4222-8333-944455556666",
        MATOOLKIT_TENANT_AUTH: "certificate",
        MATOOLKIT_CLIENT_CERTIFICATE_PATH: path,
      });
      expect(result.description).toBe(
        "tenant fabrikam.onmicrosoft.com (certificate, app 0f3c1d2e-1111-4222-8333-944455556666)",
      );
      expect(result.clients.graph.request).toBeTypeOf("function");
      expect(result.clients.exchange.invoke).toBeTypeOf("function");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
