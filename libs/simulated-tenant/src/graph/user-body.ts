import type { Response } from "express";
import type { DirectoryUser } from "../model.ts";
import type { TenantState } from "../tenant-state.ts";
import { sendBadRequest, sendInvalidValue, sendObjectConflict } from "./graph-responses.ts";
import {
  hasVerifiedDomain,
  matchesKind,
  meetsPasswordComplexity,
  upnTakenBy,
  writableUserProperties,
} from "./user-shape.ts";

/**
 * Validates the body of POST /users and PATCH /users/{id} the way Graph does, answering the
 * error itself and returning undefined when the body is refused. The password is checked, never
 * kept: the simulated tenant has no sign-in, and a rehearsal log must not hold one.
 */
export interface UserWrite {
  readonly properties: Partial<DirectoryUser>;
  readonly passwordSet: boolean;
}

const requiredOnCreate = ["accountEnabled", "displayName", "mailNickname", "userPrincipalName"] as const;

export function readUserWrite(
  state: TenantState,
  response: Response,
  body: Record<string, unknown>,
  mode: { readonly create: true } | { readonly create: false; readonly userId: string },
): UserWrite | undefined {
  const properties: Record<string, unknown> = {};
  let passwordSet = false;
  for (const [name, value] of Object.entries(body)) {
    if (name.startsWith("@odata.")) continue;
    if (name === "passwordProfile") {
      const password = (value as { password?: unknown } | null)?.password;
      if (typeof password !== "string" || password === "") {
        sendInvalidValue(response, "passwordProfile", "User");
        return undefined;
      }
      if (!meetsPasswordComplexity(password)) {
        const message =
          "The specified password does not comply with password complexity requirements. Please provide a different password.";
        sendBadRequest(response, message, [
          { code: "PasswordViolation", message, target: "passwordProfile" },
        ]);
        return undefined;
      }
      passwordSet = true;
      continue;
    }
    const kind = writableUserProperties[name];
    if (kind === undefined) {
      sendBadRequest(response, `Invalid property '${name}'.`);
      return undefined;
    }
    if (!matchesKind(value, kind) || (name === "usageLocation" && !isCountryCode(value))) {
      sendInvalidValue(response, name, "User");
      return undefined;
    }
    properties[name] = value;
  }
  if (mode.create) {
    const missing = requiredOnCreate.find((name) => properties[name] === undefined);
    if (missing !== undefined) {
      sendInvalidValue(response, missing, "User");
      return undefined;
    }
    if (!passwordSet) {
      sendInvalidValue(response, "passwordProfile", "User");
      return undefined;
    }
  }
  const upn = properties.userPrincipalName;
  if (typeof upn === "string") {
    if (!hasVerifiedDomain(state, upn)) {
      const message =
        "The domain portion of the userPrincipalName property is invalid. You must use one of the verified domain names in your organization.";
      sendBadRequest(response, message, [{ code: "InvalidValue", message, target: "userPrincipalName" }]);
      return undefined;
    }
    if (upnTakenBy(state, upn, mode.create ? undefined : mode.userId) !== undefined) {
      sendObjectConflict(response, "userPrincipalName");
      return undefined;
    }
  }
  return { properties: properties as Partial<DirectoryUser>, passwordSet };
}

function isCountryCode(value: unknown): boolean {
  return value === null || (typeof value === "string" && /^[A-Za-z]{2}$/.test(value));
}

/** "displayName, department=Sales": what a change-log entry says was written (never a password). */
export function describeWrite(write: UserWrite): string {
  const parts = Object.entries(write.properties).map(([name, value]) => `${name}=${JSON.stringify(value)}`);
  if (write.passwordSet) parts.push("passwordProfile set");
  return parts.join(", ");
}
