import type { DirectoryUser } from "../model.ts";
import type { TenantState } from "../tenant-state.ts";
import type { EntityShape } from "./select.ts";

/**
 * What the simulated Graph knows about `microsoft.graph.user`: the selectable properties (the
 * modelled ones, plus default properties Graph returns that the model does not hold, answered
 * null), the writable ones with their JSON kinds, and how "external" is recognised.
 */
export const userShape: EntityShape = {
  typeName: "microsoft.graph.user",
  properties: [
    "id",
    "userPrincipalName",
    "displayName",
    "mailNickname",
    "mail",
    "givenName",
    "surname",
    "userType",
    "accountEnabled",
    "externalUserState",
    "identities",
    "otherMails",
    "proxyAddresses",
    "businessPhones",
    "department",
    "jobTitle",
    "companyName",
    "usageLocation",
    "employeeId",
    "onPremisesImmutableId",
    "onPremisesSyncEnabled",
    "onPremisesUserPrincipalName",
    "assignedPlans",
    "externalUserConvertedOn",
    "createdDateTime",
    "mobilePhone",
    "officeLocation",
    "preferredLanguage",
  ],
  // Stamped by the beta-only conversion API and read on beta (convert-external-users-internal.md
  // queries it with GET /beta/users?$filter=externalUserConvertedOn …); v1.0 does not document it,
  // so selecting it there is refused like any unknown property.
  betaOnly: ["externalUserConvertedOn"],
  // Graph v1.0's default user properties.
  defaults: [
    "businessPhones",
    "displayName",
    "givenName",
    "jobTitle",
    "mail",
    "mobilePhone",
    "officeLocation",
    "preferredLanguage",
    "surname",
    "userPrincipalName",
    "id",
  ],
};

export type PropertyKind = "string" | "nullableString" | "boolean" | "stringList";

/** Properties a POST or PATCH may set (passwordProfile is handled apart: it is never stored). */
export const writableUserProperties: Readonly<Record<string, PropertyKind>> = {
  accountEnabled: "boolean",
  displayName: "string",
  mailNickname: "string",
  userPrincipalName: "string",
  mail: "nullableString",
  givenName: "nullableString",
  surname: "nullableString",
  department: "nullableString",
  jobTitle: "nullableString",
  companyName: "nullableString",
  usageLocation: "nullableString",
  employeeId: "nullableString",
  onPremisesImmutableId: "nullableString",
  otherMails: "stringList",
  businessPhones: "stringList",
};

export function matchesKind(value: unknown, kind: PropertyKind): boolean {
  switch (kind) {
    case "string":
      return typeof value === "string" && value.trim() !== "";
    case "nullableString":
      return value === null || typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    case "stringList":
      return Array.isArray(value) && value.every((item) => typeof item === "string");
    default: {
      const unreachable: never = kind;
      throw new Error(`Unknown property kind ${String(unreachable)}`);
    }
  }
}

/** A B2B user: invited (externalUserState set) or signing in with a federated identity. */
export function isExternalUser(user: DirectoryUser): boolean {
  return (
    user.externalUserState !== null || user.identities.some((identity) => identity.signInType === "federated")
  );
}

/** Graph refuses a UPN whose domain is not one of the tenant's verified domains. */
export function hasVerifiedDomain(state: TenantState, userPrincipalName: string): boolean {
  const at = userPrincipalName.lastIndexOf("@");
  if (at <= 0) return false;
  const domain = userPrincipalName.slice(at + 1).toLowerCase();
  return state.domains.some((verified) => verified.toLowerCase() === domain);
}

/** Another user (not `exceptId`) that holds this UPN, on the primary: uniqueness is checked there. */
export function upnTakenBy(
  state: TenantState,
  userPrincipalName: string,
  exceptId?: string,
): DirectoryUser | undefined {
  const wanted = userPrincipalName.toLowerCase();
  return state.users.find(
    (user) => user.id !== exceptId && user.userPrincipalName.toLowerCase() === wanted,
    "primary",
  );
}

/** Entra's default policy: 8–256 characters and three of lower, upper, digit, symbol. */
export function meetsPasswordComplexity(password: string): boolean {
  if (password.length < 8 || password.length > 256) return false;
  const classes = [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/].filter((pattern) => pattern.test(password));
  return classes.length >= 3;
}
