// @matoolkit/auth: tokens and roles shared by the admin API (which verifies them) and the CLI
// (which issues local tokens and names roles). No Express here: the middleware stays in the admin API.
export {
  authConfigFromEnv,
  authConfigSchema,
  authModes,
  defaultDataDir,
  entraAuthConfigSchema,
  localAuthConfigSchema,
} from "./auth-config.ts";
export type { AuthConfig, AuthMode, EntraAuthConfig, LocalAuthConfig } from "./auth-config.ts";
export { AuthError, authErrorCodes, httpStatusOf } from "./auth-error.ts";
export type { AuthErrorCode } from "./auth-error.ts";
export { createVerifierForConfig, entraAudiences, entraIssuers } from "./create-verifier.ts";
export type { CreateVerifierOptions, WarningLogger } from "./create-verifier.ts";
export {
  clientIdOfApplicationIdUri,
  defaultEntraInstance,
  entraAuthConfigFromEnv,
} from "./entra-auth-config.ts";
export { createJwksCache } from "./jwks-cache.ts";
export type { JwksCacheOptions, JwksRefreshFailure } from "./jwks-cache.ts";
export { issueLocalToken } from "./issue-local-token.ts";
export type { IssueLocalTokenOptions } from "./issue-local-token.ts";
export {
  entraIssuer,
  entraJwksUrl,
  entraKeySource,
  KeySourceUnavailableError,
  localKeySource,
} from "./key-source.ts";
export type { EntraKeySourceOptions, VerificationKeySource } from "./key-source.ts";
export {
  loadOrCreateLocalSigningKey,
  localSigningAlgorithm,
  localSigningKeyPath,
} from "./local-signing-key.ts";
export type { LocalSigningKey } from "./local-signing-key.ts";
export {
  appRoles,
  describeRoles,
  hasReadAccess,
  hasRole,
  hasRoleOrAbove,
  identityFromClaims,
  readRoles,
  rolesGranting,
} from "./principal.ts";
export type { AppRole, Principal } from "./principal.ts";
export { createTokenVerifier } from "./verify-token.ts";
export { signInConfigOf, signInConfigSchema } from "./sign-in-config.ts";
export type { SignInConfig } from "./sign-in-config.ts";
export type { TokenExpectations, TokenVerifier } from "./verify-token.ts";
