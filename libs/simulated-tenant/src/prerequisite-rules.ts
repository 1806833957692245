import { z } from "zod";

/**
 * Switchable prerequisite rules of the simulated tenant for B2B and cross-tenant mailbox moves.
 * Each defaults to what the real service does, so a rehearsal meets the service's strictness;
 * a test about something else may switch one off. The source of each rule is cited where it is
 * enforced:
 * - `invitationRequiresExternalMail`, `invitationRefusesSyncedUsers`: graph/b2b-prerequisites.ts;
 * - `conversionRequiresExternalAuthentication`: graph/conversion-routes.ts;
 * - `exchangeLicenseProvisionsMailbox`: seed.ts (applySeed) and exchange/license-provisioning.ts.
 */
export interface PrerequisiteRules {
  /** Inviting an existing internal user needs its `mail` set to the invited external address. */
  readonly invitationRequiresExternalMail: boolean;
  /** Inviting an internal user that carries `onPremisesUserPrincipalName` (synced) is refused. */
  readonly invitationRefusesSyncedUsers: boolean;
  /** convertExternalToInternalMemberUser refuses users who do not authenticate externally yet. */
  readonly conversionRequiresExternalAuthentication: boolean;
  /** A MailUser licensed for Exchange Online before its ExchangeGuid is set becomes a mailbox. */
  readonly exchangeLicenseProvisionsMailbox: boolean;
}

/** As the real service. */
export const realServicePrerequisiteRules: PrerequisiteRules = {
  invitationRequiresExternalMail: true,
  invitationRefusesSyncedUsers: true,
  conversionRequiresExternalAuthentication: true,
  exchangeLicenseProvisionsMailbox: true,
};

/** For options and PUT /_simulator/settings: any subset, booleans only. */
export const prerequisiteRulesSchema = z
  .object({
    invitationRequiresExternalMail: z.boolean(),
    invitationRefusesSyncedUsers: z.boolean(),
    conversionRequiresExternalAuthentication: z.boolean(),
    exchangeLicenseProvisionsMailbox: z.boolean(),
  })
  .partial()
  .strict();
