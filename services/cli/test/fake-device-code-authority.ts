// Test support: a stand-in for Entra ID's device authorization grant (RFC 8628) as MSAL drives
// it: OpenID metadata at `{authority}/v2.0/.well-known/openid-configuration`, device codes at
// `…/oauth2/v2.0/devicecode`, tokens at `…/oauth2/v2.0/token` (device_code then refresh_token
// grants). HTTPS with a self-signed certificate: MSAL refuses authorities that are not https,
// so the child process under test trusts the certificate through NODE_EXTRA_CA_CERTS.
import { generateKeyPairSync, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import forge from "node-forge";

export interface FakeAuthority {
  readonly host: string;
  readonly tenantId: string;
  readonly certificatePem: string;
  readonly username: string;
  /** Every token-endpoint request's grant type, in order (no secrets: codes are fakes). */
  grants(): string[];
  deviceCodeRequests(): number;
  /** Bearer tokens the fake admin API route (`GET /api/runbooks`) received. */
  apiBearerTokens(): string[];
  close(): Promise<void>;
}

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

function selfSignedCertificate(): { keyPem: string; certPem: string } {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const keyPem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = `0${Math.floor(Math.random() * 1e9).toString(16)}`;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  const attrs = [{ name: "commonName", value: "127.0.0.1" }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: "basicConstraints", cA: true },
    { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] },
  ]);
  cert.sign(key, forge.md.sha256.create());
  return { keyPem, certPem: forge.pki.certificateToPem(cert) };
}

/**
 * `accessTokenSeconds` below MSAL's five-minute refresh margin makes every later silent request
 * use the refresh token, which proves the refresh token survived in the persistent cache.
 */
export async function startFakeDeviceCodeAuthority(options: {
  readonly clientId: string;
  readonly scope: string;
  readonly accessTokenSeconds: number;
}): Promise<FakeAuthority> {
  const tenantId = randomUUID();
  const userId = randomUUID();
  const username = "operator@contoso.test";
  const { keyPem, certPem } = selfSignedCertificate();
  const grants: string[] = [];
  const bearers: string[] = [];
  let deviceCodes = 0;
  let pendingPolls = 0;
  let issued = 0;
  let host = "";

  const tokens = () => {
    issued += 1;
    const now = Math.floor(Date.now() / 1000);
    const idToken = [
      base64url({ alg: "none", typ: "JWT" }),
      base64url({
        aud: options.clientId,
        iss: `${host}/${tenantId}/v2.0`,
        tid: tenantId,
        oid: userId,
        sub: userId,
        preferred_username: username,
        name: "Operator",
        iat: now,
        nbf: now,
        exp: now + 3600,
        ver: "2.0",
      }),
      "",
    ].join(".");
    return {
      token_type: "Bearer",
      scope: options.scope,
      expires_in: options.accessTokenSeconds,
      ext_expires_in: options.accessTokenSeconds,
      access_token: `fake-access-token-${issued}`,
      refresh_token: `fake-refresh-token-${issued}`,
      id_token: idToken,
      client_info: base64url({ uid: userId, utid: tenantId }),
    };
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", host);
    let body = "";
    for await (const chunk of req) body += String(chunk);
    const form = new URLSearchParams(body);
    const prefix = `/${tenantId}`;
    if (req.method === "GET" && url.pathname === `${prefix}/v2.0/.well-known/openid-configuration`) {
      return send(res, 200, {
        issuer: `${host}${prefix}/v2.0`,
        token_endpoint: `${host}${prefix}/oauth2/v2.0/token`,
        authorization_endpoint: `${host}${prefix}/oauth2/v2.0/authorize`,
        device_authorization_endpoint: `${host}${prefix}/oauth2/v2.0/devicecode`,
        end_session_endpoint: `${host}${prefix}/oauth2/v2.0/logout`,
        jwks_uri: `${host}${prefix}/discovery/v2.0/keys`,
        response_types_supported: ["code"],
        subject_types_supported: ["pairwise"],
        id_token_signing_alg_values_supported: ["RS256"],
      });
    }
    if (req.method === "POST" && url.pathname === `${prefix}/oauth2/v2.0/devicecode`) {
      if (form.get("client_id") !== options.clientId) return send(res, 400, { error: "unauthorized_client" });
      deviceCodes += 1;
      pendingPolls = 1;
      return send(res, 200, {
        user_code: "FAKE-CODE",
        device_code: "fake-device-code",
        verification_uri: `${host}/devicelogin`,
        expires_in: 900,
        interval: 1,
        message: `To sign in, open ${host}/devicelogin and enter the code FAKE-CODE to authenticate.`,
      });
    }
    if (req.method === "POST" && url.pathname === `${prefix}/oauth2/v2.0/token`) {
      const grant = form.get("grant_type") ?? "";
      grants.push(grant);
      // RFC 8628 names the grant by its URN; Entra also accepts the short `device_code` MSAL sends.
      if (grant === "urn:ietf:params:oauth:grant-type:device_code" || grant === "device_code") {
        if (form.get("device_code") !== "fake-device-code") return send(res, 400, { error: "invalid_grant" });
        // RFC 8628 3.5: the client keeps polling while the user has not finished signing in.
        if (pendingPolls > 0) {
          pendingPolls -= 1;
          return send(res, 400, { error: "authorization_pending", error_description: "pending" });
        }
        return send(res, 200, tokens());
      }
      if (grant === "refresh_token") {
        // Rotated like Entra's: only the latest refresh token is good, so a client that did not
        // persist the newest one fails here.
        if (form.get("refresh_token") !== `fake-refresh-token-${issued}`)
          return send(res, 400, { error: "invalid_grant" });
        return send(res, 200, tokens());
      }
      return send(res, 400, { error: "unsupported_grant_type" });
    }
    if (req.method === "GET" && url.pathname === "/api/runbooks") {
      bearers.push((req.headers.authorization ?? "").replace(/^Bearer /, ""));
      return send(res, 200, []);
    }
    return send(res, 404, { error: "not_found", path: url.pathname });
  };

  const server = createServer({ key: keyPem, cert: certPem }, (req, res) => {
    handle(req, res).catch(() => send(res, 500, { error: "server_error" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  host = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    host,
    tenantId,
    certificatePem: certPem,
    username,
    grants: () => [...grants],
    deviceCodeRequests: () => deviceCodes,
    apiBearerTokens: () => [...bearers],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
