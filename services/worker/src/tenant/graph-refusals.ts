import { reasonCodes, type ReasonCode } from "@matoolkit/domain";

/**
 * Graph refusals that its generic 400/403 codes do not tell apart, recognised by the text Graph
 * sends, each given a permanent reason code of its own and an explanation that says what to do
 * (the message never quotes Graph's text: it may name objects; it is cut at 200 characters, so
 * explanations stay short). Sources, in the simulated tenant
 * that reproduces them (libs/simulated-tenant/src/graph): group-write-rules.ts,
 * synced-user-rules.ts, invitation-policy.ts.
 */
export interface GraphRefusal {
  readonly reason: ReasonCode;
  /** Appended to the mapped error's message. */
  readonly explanation: string;
}

const refusals: readonly (GraphRefusal & { readonly status: number; readonly text: RegExp })[] = [
  {
    status: 400,
    text: /Cannot Update a mail-enabled security groups? and or distribution list/i,
    reason: reasonCodes.graphMailEnabledGroup,
    explanation:
      "mail-enabled group, its members are managed in Exchange Online (Add-DistributionGroupMember, Remove-DistributionGroupMember)",
  },
  {
    status: 400,
    text: /Cannot Create a mail-enabled security groups? and or distribution list/i,
    reason: reasonCodes.graphMailEnabledGroup,
    explanation:
      "mail-enabled security groups and distribution groups are created in Exchange Online (New-DistributionGroup), not through Graph",
  },
  {
    status: 400,
    text: /on-premises mastered Directory Sync objects/i,
    reason: reasonCodes.graphOnPremisesMastered,
    explanation:
      "user synced from on-premises Active Directory, which owns these attributes: change them there",
  },
  {
    status: 403,
    text: /Guest invitations not allowed/i,
    reason: reasonCodes.graphInvitationsNotAllowed,
    explanation:
      "the tenant's allowInvitesFrom setting (External collaboration settings) refuses this app's invitations",
  },
];

/** The refusal a Graph error stands for, or undefined for any other error. */
export function graphRefusalOf(status: number, message: string): GraphRefusal | undefined {
  const found = refusals.find((refusal) => refusal.status === status && refusal.text.test(message));
  return found === undefined ? undefined : { reason: found.reason, explanation: found.explanation };
}
