/**
 * Whether a user is already a B2B (external) user: invited (`externalUserState` set) or signing
 * in with a federated identity (`identities[].signInType` "federated": another Entra tenant,
 * a Microsoft account, email one-time passcode, a social provider). Internal users sign in with
 * `userPrincipalName` (or B2C local `emailAddress`/`userName`) identities issued by the tenant.
 */
export const externalUserProperties = ["externalUserState", "identities", "userType"] as const;

export function isExternalUser(user: Readonly<Record<string, unknown>>): boolean {
  if (typeof user.externalUserState === "string" && user.externalUserState !== "") return true;
  const identities = Array.isArray(user.identities) ? (user.identities as unknown[]) : [];
  return identities.some(
    (identity) =>
      typeof identity === "object" &&
      identity !== null &&
      String((identity as { signInType?: unknown }).signInType).toLowerCase() === "federated",
  );
}
