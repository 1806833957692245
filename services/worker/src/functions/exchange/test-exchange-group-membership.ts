import { z } from "zod";
import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import { exchangeErrorOf } from "../../tenant/exchange-error-mapping.ts";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { addressKey, parseProxyAddress } from "./addresses.ts";
import { flag, identity } from "./exchange-params.ts";
import { withPatience, type LookupPatience } from "./lookup-patience.ts";
import type { ExchangeClient } from "../../tenant/exchange-client.ts";

const name = "Test-ExchangeGroupMembership";
const params = z.object({
  GroupIdentity: identity,
  MemberIdentity: identity,
  ShouldBeMember: flag.default(true),
  FailOnMismatch: flag.default(true),
});

/**
 * Checks whether a recipient is (or, with `ShouldBeMember: false`, is not) a direct member of a
 * distribution group. The member is recognised by Guid, ExternalDirectoryObjectId, Name, Alias or
 * any of its SMTP addresses, so a runbook can pass whichever it has. When the membership is not as
 * expected: permanent check.membership, or with `FailOnMismatch: false` `Match: false`.
 * Read-only, so re-runs are safe.
 */
export function testExchangeGroupMembership(patience: LookupPatience): WorkerFunction {
  return async (raw, { tenant, signal }) => {
    const { GroupIdentity, MemberIdentity, ShouldBeMember, FailOnMismatch } = parseFunctionParams(
      name,
      params,
      raw,
    );
    const members = await withPatience(patience, signal, () =>
      groupMembers(tenant.exchange, GroupIdentity, signal),
    );
    const IsMember = members.some((member) => isSameRecipient(member, MemberIdentity));
    const Match = IsMember === ShouldBeMember;
    if (!Match && FailOnMismatch) {
      const expectation = ShouldBeMember ? "is not a member" : "is a member, but should not be";
      throw new NonRetriableError(
        reasonCodes.checkMembership,
        `${name}: MemberIdentity ${expectation} of GroupIdentity`,
      );
    }
    return { complete: true, data: { IsMember, Match } };
  };
}

async function groupMembers(
  exchange: ExchangeClient,
  groupIdentity: string,
  signal: AbortSignal,
): Promise<readonly Record<string, unknown>[]> {
  try {
    const { value } = await exchange.invoke(
      "Get-DistributionGroupMember",
      { Identity: groupIdentity, ResultSize: "Unlimited" },
      signal,
    );
    return value;
  } catch (error) {
    if (exchangeErrorOf(error)?.exceptionType?.endsWith("ManagementObjectNotFoundException") === true) {
      throw new NonRetriableError(
        reasonCodes.exchangeNotFound,
        `${name}: GroupIdentity matches no distribution group`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

function isSameRecipient(member: Readonly<Record<string, unknown>>, wanted: string): boolean {
  const key = wanted.trim().toLowerCase();
  const ids = [member.Guid, member.ExternalDirectoryObjectId, member.Name, member.Alias, member.Identity];
  if (ids.some((value) => typeof value === "string" && value.toLowerCase() === key)) return true;
  const addresses = [
    member.PrimarySmtpAddress,
    ...(Array.isArray(member.EmailAddresses) ? member.EmailAddresses : []),
  ];
  const wantedAddress = addressKey(wanted);
  return addresses.some((address) => {
    if (typeof address !== "string") return false;
    const prefix = parseProxyAddress(address).prefix;
    return (prefix === undefined || prefix.toLowerCase() === "smtp") && addressKey(address) === wantedAddress;
  });
}
