import { z } from "zod";
import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import { graphErrorOf } from "../../tenant/graph-error-mapping.ts";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import type { EntraSettings } from "./entra-options.ts";
import { flag, optionalText, text, userPrincipalName } from "./entra-params.ts";
import { generatePassword } from "./generate-password.ts";
import { findUser, type GraphUser } from "./resolve-directory-object.ts";
import { untilFound } from "./replication-grace.ts";

const name = "New-EntraUser";

const params = z.object({
  UserPrincipalName: userPrincipalName,
  DisplayName: text,
  MailNickname: optionalText,
  GivenName: optionalText,
  Surname: optionalText,
  Department: optionalText,
  JobTitle: optionalText,
  CompanyName: optionalText,
  UsageLocation: optionalText,
  EmployeeId: optionalText,
  AccountEnabled: flag.default(true),
  Password: optionalText,
  ForceChangePasswordNextSignIn: flag.default(true),
});

/**
 * New-EntraUser (Object): creates a cloud user unless one with that UPN exists.
 * Check-then-act: an existing UPN → `Created: false`, nothing written (whoever created it). A
 * create refused with ObjectConflict on userPrincipalName (a previous attempt's create that reads
 * do not show yet) is read back through the replication grace and also reported `Created: false`.
 * The password (given or generated) is only sent to Graph: never returned, never logged.
 */
export function newEntraUser(settings: EntraSettings): WorkerFunction {
  return async (raw, context) => {
    const p = parseFunctionParams(name, params, raw);
    const { graph } = context.tenant;
    const existing = await findUser(graph, p.UserPrincipalName, [], context.signal);
    if (existing !== undefined) return result(existing, false);

    const body = {
      accountEnabled: p.AccountEnabled,
      displayName: p.DisplayName,
      mailNickname: p.MailNickname ?? mailNicknameOf(p.UserPrincipalName),
      userPrincipalName: p.UserPrincipalName,
      passwordProfile: {
        password: p.Password ?? generatePassword(),
        forceChangePasswordNextSignIn: p.ForceChangePasswordNextSignIn,
      },
      ...optional({
        givenName: p.GivenName,
        surname: p.Surname,
        department: p.Department,
        jobTitle: p.JobTitle,
        companyName: p.CompanyName,
        usageLocation: p.UsageLocation,
        employeeId: p.EmployeeId,
      }),
    };
    try {
      const created = await graph.request<GraphUser>(
        { method: "POST", path: "/users", body },
        context.signal,
      );
      return result(created, true);
    } catch (error) {
      if (!isUpnConflict(error)) throw error;
    }
    const raced = await untilFound(
      () => findUser(graph, p.UserPrincipalName, [], context.signal),
      settings.replicationGraceMs,
      context.signal,
    );
    if (raced !== undefined) return result(raced, false);
    throw new NonRetriableError(
      reasonCodes.graphConflict,
      `${name}: UserPrincipalName is already used by a directory object that is not a readable user`,
    );
  };
}

function result(user: GraphUser, created: boolean) {
  return {
    complete: true,
    data: { UserId: user.id, UserPrincipalName: user.userPrincipalName, Created: created },
  };
}

/** Graph's duplicate-UPN answer: 400 with an ObjectConflict detail on userPrincipalName. */
function isUpnConflict(error: unknown): boolean {
  const info = graphErrorOf(error);
  if (info === undefined || info.status !== 400) return false;
  return info.details.some(
    (detail) =>
      detail.code === "ObjectConflict" && (detail.target ?? "userPrincipalName") === "userPrincipalName",
  );
}

/** The UPN's local part without the characters Graph refuses in mailNickname. */
function mailNicknameOf(upn: string): string {
  const local = upn.slice(0, upn.lastIndexOf("@")).replace(/[^A-Za-z0-9!#$%&'*+\-/=?^_`{|}~.]/g, "");
  return local === "" ? "user" : local;
}

function optional(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}
