import { z } from "zod";
import type { AuthConfig } from "./auth-config.ts";

/**
 * What a browser (the dashboard) or another public client needs to sign a user in, served
 * without a token by GET /api/auth/config. Identifiers only, never a secret: local mode has no
 * browser flow (tokens come from `npm run token` or the start banner's link); Entra mode names
 * the authority, the client id of the admin API's app registration (used by the SPA with auth
 * code + PKCE) and the scopes to request for an access token to this API.
 */
export const signInConfigSchema = z
  .discriminatedUnion("mode", [
    z.object({ mode: z.literal("local") }),
    z.object({
      mode: z.literal("entra"),
      authority: z.string().meta({ description: "e.g. https://login.microsoftonline.com/{tenant-id}" }),
      tenantId: z.string(),
      clientId: z.string().meta({ description: "Application (client) ID of the admin API registration" }),
      scopes: z
        .array(z.string())
        .meta({ description: "Scopes to request, e.g. api://{client-id}/access_as_user (or /.default)" }),
    }),
  ])
  .meta({ id: "SignInConfig" });
export type SignInConfig = z.infer<typeof signInConfigSchema>;

export function signInConfigOf(config: AuthConfig): SignInConfig {
  switch (config.mode) {
    case "local":
      return { mode: "local" };
    case "entra": {
      // The accepted delegated scopes, as full names; without any, `.default` asks for the app roles.
      const scopes = config.scopes.length > 0 ? config.scopes : [".default"];
      return {
        mode: "entra",
        authority: `${config.instance}${config.tenantId}`,
        tenantId: config.tenantId,
        clientId: config.clientId,
        scopes: scopes.map((scope) => `${config.audience.replace(/\/$/, "")}/${scope}`),
      };
    }
    default:
      return config satisfies never;
  }
}
