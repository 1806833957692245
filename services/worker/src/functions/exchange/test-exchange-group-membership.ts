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
 *
 * Runbooks run this right after the Add/Remove it verifies, and the server that answers may not
 * have seen that write yet. So a wrong membership is re-read within the lookup patience (the
 * same attempts as "not found", shared with it) and reported only if it is still wrong on the
 * last attempt: a match on any read returns at once, a genuine mismatch takes the whole patience
 * (default 3 × 2 s) to be reported. The waits are abortable (job timeout).
 */
export function testExchangeGroupMembership(patience: LookupPatience): WorkerFunction {
  return async (raw, { tenant, signal }) => {
    const { GroupIdentity, MemberIdentity, ShouldBeMember, FailOnMismatch } = parseFunctionParams(
      name,
      params,
      raw,
    );
    let last: boolean | undefined;
    const read = async (): Promise<boolean> => {
      try {
        const members = await groupMembers(tenant.exchange, GroupIdentity, signal);
        last = members.some((member) => isSameRecipient(member, MemberIdentity));
      } catch (error) {
        // Found before: a server answering "not found" now says nothing new, the last read stands.
        const notFound = error instanceof NonRetriableError && error.reason === reasonCodes.exchangeNotFound;
        if (!notFound || last === undefined) throw error;
      }
      return last;
    };
    const IsMember = await withPatience(patience, signal, read, (isMember) => isMember === ShouldBeMember);
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
