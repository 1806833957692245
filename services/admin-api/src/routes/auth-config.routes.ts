import { signInConfigSchema } from "@matoolkit/auth";
import { defineOperation } from "../openapi/operation.ts";

/**
 * GET /api/auth/config: public (a client asks before it has a token), identifiers only. The
 * dashboard reads it to choose between the paste-a-token form (local) and MSAL (Entra).
 */
export const authConfigOperations = [
  defineOperation({
    method: "get",
    path: "/api/auth/config",
    operationId: "getAuthConfig",
    tag: "auth",
    summary: "How clients sign in: local tokens or Entra ID (authority, client id, scopes)",
    description:
      "Served without a token and holds no secret. `local`: get a token with `npm run token` " +
      "(or the dashboard link printed by `npm start`). `entra`: run the authorization code flow " +
      "with PKCE against `authority` for `clientId`, requesting `scopes`.",
    access: "public",
    responses: { 200: { description: "The sign-in configuration", schema: signInConfigSchema } },
  }).handle(({ deps }) => ({ status: 200, body: deps.signIn })),
];
