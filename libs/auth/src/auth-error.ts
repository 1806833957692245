export const authErrorCodes = ["auth.unauthenticated", "auth.forbidden", "auth.keys_unavailable"] as const;
export type AuthErrorCode = (typeof authErrorCodes)[number];

/**
 * An authentication or authorization failure with a message that is safe to return to the
 * caller: it never contains the token, its claims or the user's identity.
 */
export class AuthError extends Error {
  readonly code: AuthErrorCode;

  constructor(code: AuthErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AuthError";
    this.code = code;
  }
}

export function httpStatusOf(code: AuthErrorCode): 401 | 403 | 503 {
  switch (code) {
    case "auth.unauthenticated":
      return 401;
    case "auth.forbidden":
      return 403;
    case "auth.keys_unavailable":
      return 503;
    default: {
      const unreachable: never = code;
      throw new Error(`Unknown auth error code ${String(unreachable)}`);
    }
  }
}

/** Thrown by a key source that cannot reach its keys: a server-side outage, not a bad token. */
export class KeySourceUnavailableError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("Token signing keys are unavailable", options);
    this.name = "KeySourceUnavailableError";
  }
}
