import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { bundle, getSecret, listVersions, setSecret, VaultError } from "./key-vault-operations.ts";
import { KeyVaultSecretStore } from "./key-vault-secret-store.ts";

/**
 * Azure Key Vault's secrets data plane on loopback, for tests: at least as strict as the
 * documented REST API (each rule cites its source). Docs used throughout:
 * [auth] https://learn.microsoft.com/azure/key-vault/general/authentication-requests-and-responses
 * [errors] https://learn.microsoft.com/azure/key-vault/general/rest-error-codes
 * [set] https://learn.microsoft.com/rest/api/keyvault/secrets/set-secret/set-secret
 * [get] https://learn.microsoft.com/rest/api/keyvault/secrets/get-secret/get-secret
 * [versions] https://learn.microsoft.com/rest/api/keyvault/secrets/get-secret-versions/get-secret-versions
 * [roles] https://learn.microsoft.com/azure/role-based-access-control/built-in-roles/security
 */
export type SimulatedVaultRole = "Key Vault Secrets User" | "Key Vault Secrets Officer";
export type VaultOperation = "list" | "get" | "set";

export interface KeyVaultSimulatorOptions {
  /** Bearer token → the role its identity holds on the vault; any other token is refused. */
  readonly identities: ReadonlyMap<string, SimulatedVaultRole>;
  readonly tenantId?: string;
  /** Smaller than the service's 25 to exercise nextLink ([versions]: "up to 25 results"). */
  readonly pageSize?: number;
  /** The docs do not say how listing an absent secret's versions answers: either, clients handle both. */
  readonly absentSecretVersions?: "404" | "empty";
  readonly clock?: () => number;
  /** Runs before an authorized operation (tests hold requests to order races). */
  readonly beforeOperation?: (operation: VaultOperation, secretName: string, token: string) => Promise<void>;
}

export interface RecordedVaultRequest {
  readonly method: string;
  readonly path: string;
  readonly apiVersion: string | null;
  readonly authorization: string | undefined;
}

export interface KeyVaultSimulator {
  readonly url: string;
  readonly store: KeyVaultSecretStore;
  readonly requests: RecordedVaultRequest[];
  close(): Promise<void>;
}

// API versions of the secrets data plane ("Key Vault REST API versions" and [set]'s version picker).
const apiVersions = new Set(["7.0", "7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "2025-07-01", "2026-04-01"]);
// [set]: secret-name pattern ^[0-9a-zA-Z-]+$; 1-127 characters (about-keys-secrets-certificates).
const secretNamePattern = /^[0-9a-zA-Z-]{1,127}$/u;
// [roles]: Secrets User: secrets/getSecret/action and secrets/readMetadata/action; Officer: secrets/*.
const allowed: Record<SimulatedVaultRole, readonly VaultOperation[]> = {
  "Key Vault Secrets User": ["list", "get"],
  "Key Vault Secrets Officer": ["list", "get", "set"],
};

export async function startKeyVaultSimulator(options: KeyVaultSimulatorOptions): Promise<KeyVaultSimulator> {
  const store = new KeyVaultSecretStore(options.clock);
  const requests: RecordedVaultRequest[] = [];
  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      const failure =
        error instanceof VaultError ? error : new VaultError(500, "InternalError", String(error));
      // [errors], [get] "KeyVaultError": { error: { code, message, innererror } }.
      send(response, failure.status, {
        error: {
          code: failure.code,
          message: failure.message,
          ...(failure.inner === undefined ? {} : { innererror: { code: failure.inner } }),
        },
      });
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", `http://${request.headers.host}`);
    const apiVersion = url.searchParams.get("api-version");
    const authorization = request.headers.authorization;
    requests.push({ method: request.method ?? "", path: url.pathname, apiVersion, authorization });
    const body = await readBody(request);
    // [auth]: a request without a valid bearer token gets 401 and the challenge naming the
    // authority (with the tenant) and the resource the token must be for; the SDK sends its
    // first request without token or body to obtain it.
    const token = /^Bearer (.+)$/u.exec(authorization ?? "")?.[1];
    const role = token === undefined ? undefined : options.identities.get(token);
    if (role === undefined) {
      response.setHeader(
        "WWW-Authenticate",
        `Bearer authorization="https://login.microsoftonline.com/${options.tenantId ?? "72f988bf-86f1-41af-91ab-2d7cd011db47"}", resource="https://vault.azure.net"`,
      );
      throw new VaultError(
        401,
        "Unauthorized",
        token === undefined
          ? "AKV10000: Request is missing a Bearer or PoP token."
          : "AKV10032: Invalid issuer or token.",
      );
    }
    // [set], [get], [versions]: api-version is a required query parameter.
    if (apiVersion === null || !apiVersions.has(apiVersion)) {
      throw new VaultError(400, "BadParameter", `api-version ${apiVersion ?? "(missing)"} is not supported`);
    }
    const [collection, name, rest, ...extra] = url.pathname.split("/").slice(1);
    if (collection !== "secrets" || name === undefined || !secretNamePattern.test(name) || extra.length > 0) {
      throw new VaultError(
        400,
        "BadParameter",
        `no such secrets operation: ${request.method} ${url.pathname}`,
      );
    }
    const operation: VaultOperation | undefined =
      request.method === "PUT" && rest === undefined
        ? "set"
        : request.method === "GET" && rest === "versions"
          ? "list"
          : request.method === "GET"
            ? "get"
            : undefined;
    if (operation === undefined)
      throw new VaultError(405, "BadParameter", `${request.method} is not supported`);
    if (!allowed[role].includes(operation)) {
      // [errors] 403; the service's body (as quoted in piyushsachdeva/Terraform_AKS#2, and
      // https://learn.microsoft.com/azure/key-vault/general/rbac-guide): code Forbidden, inner ForbiddenByRbac.
      throw new VaultError(
        403,
        "Forbidden",
        `Caller is not authorized to perform action on resource (${operation}).`,
        "ForbiddenByRbac",
      );
    }
    await options.beforeOperation?.(operation, name, token!);
    const base = `http://${request.headers.host}`;
    if (operation === "set")
      return send(response, 200, bundle(base, name, setSecret(store, name, body), true));
    if (operation === "get")
      return send(response, 200, bundle(base, name, getSecret(store, name, rest ?? ""), true));
    send(response, 200, listVersions(store, { base, name, url, apiVersion }, options));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    store,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function send(response: ServerResponse, status: number, body: object): void {
  response.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
  response.end(JSON.stringify(body));
}
