// Test support: a minimal API with one read and one write route behind the auth middleware,
// served on an ephemeral port so tests exercise real HTTP requests.
import type { AddressInfo } from "node:net";
import express from "express";
import { authenticate, principalOf, requireReadAccess, requireRole } from "../../src/auth/middleware.ts";
import type { TokenVerifier } from "@matoolkit/auth";

export interface ProtectedTestApp {
  readonly baseUrl: string;
  request(method: "GET" | "POST", path: string, authorization?: string): Promise<Response>;
  close(): Promise<void>;
}

export async function startProtectedTestApp(verifier: TokenVerifier): Promise<ProtectedTestApp> {
  const app = express();
  const respondWithPrincipal = (_req: express.Request, res: express.Response) => {
    const { identity, roles } = principalOf(res);
    res.json({ identity, roles });
  };
  app.get("/things", authenticate(verifier), requireReadAccess, respondWithPrincipal);
  app.post("/things", authenticate(verifier), requireRole("Admin"), respondWithPrincipal);

  const server = await new Promise<ReturnType<typeof app.listen>>((resolve, reject) => {
    const listening = app.listen(0, "127.0.0.1", (error?: Error) =>
      error ? reject(error) : resolve(listening),
    );
  });
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    request: (method, path, authorization) =>
      fetch(`${baseUrl}${path}`, {
        method,
        headers: authorization === undefined ? {} : { authorization },
      }),
    close: () =>
      new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
