import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { parse } from "csv-parse/sync";
import { z } from "zod";
import type { DirectoryGroup, DirectoryUser, ExchangeRecipient, RecipientTypeDetails } from "./model.ts";
import type { TenantState } from "./tenant-state.ts";
import { newDirectoryUser } from "./directory-user.ts";
import { provisionLicensedMailUser } from "./exchange/license-provisioning.ts";
import { tenantAppSettingsSchema } from "./tenant-app.ts";

/**
 * What a simulated tenant starts with: a JSON file in this shape, or a CSV with one user per row
 * (see `csvRowSchema`). Only a few fields are required; the rest get what the real services would
 * default them to.
 */
const identitySchema = z.object({
  signInType: z.string(),
  issuer: z.string(),
  issuerAssignedId: z.string().nullable().default(null),
});

const assignedPlanSchema = z.object({
  service: z.string().min(1),
  capabilityStatus: z.enum(["Enabled", "Warning", "Suspended", "Deleted", "LockedOut"]).default("Enabled"),
  servicePlanId: z.string().min(1).default("efb87545-963c-4e0d-99df-69c6916d9eb0"),
  assignedDateTime: z.string().default("2026-01-01T00:00:00Z"),
});

export const seedUserSchema = z.object({
  id: z.string().min(1).optional(),
  userPrincipalName: z.string().min(3).includes("@"),
  displayName: z.string().min(1),
  mailNickname: z.string().min(1).optional(),
  mail: z.string().nullable().optional(),
  givenName: z.string().nullable().optional(),
  surname: z.string().nullable().optional(),
  userType: z.enum(["Member", "Guest"]).default("Member"),
  accountEnabled: z.boolean().default(true),
  externalUserState: z.enum(["PendingAcceptance", "Accepted"]).nullable().default(null),
  identities: z.array(identitySchema).optional(),
  otherMails: z.array(z.string()).default([]),
  proxyAddresses: z.array(z.string()).default([]),
  businessPhones: z.array(z.string()).default([]),
  department: z.string().nullable().default(null),
  jobTitle: z.string().nullable().default(null),
  companyName: z.string().nullable().default(null),
  usageLocation: z.string().nullable().default(null),
  employeeId: z.string().nullable().default(null),
  onPremisesImmutableId: z.string().nullable().default(null),
  /** true: a user synced from on-premises AD (Graph refuses changes to its synced attributes). */
  onPremisesSyncEnabled: z.boolean().nullable().default(null),
  /** Set by Entra Connect Sync's default rule; blocks inviting the user to B2B. */
  onPremisesUserPrincipalName: z.string().nullable().default(null),
  /** Licensed service plans; an enabled `exchange` plan gives a MailUser without ExchangeGuid a mailbox. */
  assignedPlans: z.array(assignedPlanSchema).default([]),
});

export const seedGroupSchema = z.object({
  id: z.string().min(1).optional(),
  displayName: z.string().min(1),
  mailNickname: z.string().min(1).optional(),
  mail: z.string().nullable().default(null),
  description: z.string().nullable().default(null),
  groupTypes: z.array(z.string()).default([]),
  securityEnabled: z.boolean().default(true),
  mailEnabled: z.boolean().default(false),
  /** User or group ids, or user UPNs. */
  members: z.array(z.string()).default([]),
});

const recipientTypes = [
  "UserMailbox",
  "SharedMailbox",
  "MailUser",
  "MailUniversalDistributionGroup",
  "MailUniversalSecurityGroup",
  "GroupMailbox",
] as const satisfies readonly RecipientTypeDetails[];

export const seedRecipientSchema = z.object({
  Guid: z.string().min(1).optional(),
  Name: z.string().min(1),
  Alias: z.string().min(1).optional(),
  DisplayName: z.string().min(1).optional(),
  RecipientTypeDetails: z.enum(recipientTypes),
  PrimarySmtpAddress: z.string().includes("@"),
  /** Extra addresses with their prefixes (`smtp:`, `X500:`); the primary is added as `SMTP:`. */
  EmailAddresses: z.array(z.string()).default([]),
  ExternalEmailAddress: z.string().nullable().default(null),
  ExchangeGuid: z.string().optional(),
  ArchiveGuid: z.string().optional(),
  LegacyExchangeDN: z.string().optional(),
  /** The Entra object this recipient belongs to: an id or a UPN from `users`. */
  ExternalDirectoryObjectId: z.string().nullable().default(null),
  EmailAddressPolicyEnabled: z.boolean().default(false),
  /** As Get-User shows it: `UserMailbox` for a mail user that had a mailbox before. */
  PreviousRecipientTypeDetails: z.string().nullable().default(null),
  /** Group recipients: member Names, addresses or Guids. */
  Members: z.array(z.string()).default([]),
});

export const tenantSeedSchema = z.object({
  tenantId: z.string().min(1).optional(),
  domains: z.array(z.string().min(3)).min(1).optional(),
  users: z.array(seedUserSchema).default([]),
  groups: z.array(seedGroupSchema).default([]),
  recipients: z.array(seedRecipientSchema).default([]),
  /** The worker app's grants and tenant settings (tenant-app.ts); default: all it needs. */
  app: tenantAppSettingsSchema.optional(),
});
export type TenantSeed = z.infer<typeof tenantSeedSchema>;
export type TenantSeedInput = z.input<typeof tenantSeedSchema>;

/** A seed file's problem: names the file, the entry and the field, never the value. */
export class TenantSeedError extends Error {
  override readonly name = "TenantSeedError";
}

/** Reads a `.json` seed (the schema above) or a `.csv` seed (one user per row). */
export async function loadTenantSeed(path: string): Promise<TenantSeed> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new TenantSeedError(
      `Cannot read tenant seed ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  const extension = extname(path).toLowerCase();
  if (extension === ".json") return parseJsonSeed(text, path);
  if (extension === ".csv") return parseCsvSeed(text, path);
  throw new TenantSeedError(
    `Tenant seed ${path}: unsupported file type "${extension}" (allowed: .json, .csv)`,
  );
}

export function parseTenantSeed(input: unknown, source = "seed"): TenantSeed {
  const parsed = tenantSeedSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues
    .slice(0, 10)
    .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
  throw new TenantSeedError(`Invalid tenant seed ${source}: ${problems.join("; ")}`);
}

function parseJsonSeed(text: string, path: string): TenantSeed {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TenantSeedError(`Tenant seed ${path} is not valid JSON: ${(error as Error).message}`);
  }
  return parseTenantSeed(json, path);
}

/**
 * CSV seed: columns `UserPrincipalName`, `DisplayName` (required) and optionally `Mail`,
 * `GivenName`, `Surname`, `Department`, `JobTitle`, `UserType`, `ExternalUserState`, `Groups`
 * (semicolon-separated group names, created as needed), `RecipientType` (UserMailbox, MailUser),
 * `PrimarySmtpAddress`, `EmailAddresses` and `ProxyAddresses` (semicolon-separated),
 * `ExternalEmailAddress`.
 */
function parseCsvSeed(text: string, path: string): TenantSeed {
  let rows: Record<string, string>[];
  try {
    rows = parse(text, { columns: true, bom: true, trim: true, skip_empty_lines: true });
  } catch (error) {
    const { lines } = error as { lines?: number };
    throw new TenantSeedError(`Tenant seed ${path}: malformed CSV near line ${lines ?? "?"}`);
  }
  const list = (value: string | undefined): string[] =>
    (value ?? "")
      .split(";")
      .map((item) => item.trim())
      .filter((item) => item !== "");
  const blankToNull = (value: string | undefined): string | null =>
    value === undefined || value === "" ? null : value;
  const users: unknown[] = [];
  const recipients: unknown[] = [];
  const groups = new Map<string, string[]>();
  rows.forEach((row) => {
    const upn = row.UserPrincipalName ?? "";
    users.push({
      userPrincipalName: upn,
      displayName: row.DisplayName,
      mail: blankToNull(row.Mail),
      givenName: blankToNull(row.GivenName),
      surname: blankToNull(row.Surname),
      department: blankToNull(row.Department),
      jobTitle: blankToNull(row.JobTitle),
      userType: row.UserType || undefined,
      externalUserState: blankToNull(row.ExternalUserState),
      proxyAddresses: list(row.ProxyAddresses),
    });
    for (const group of list(row.Groups)) groups.set(group, [...(groups.get(group) ?? []), upn]);
    if (row.RecipientType) {
      recipients.push({
        Name: upn.split("@")[0],
        DisplayName: row.DisplayName,
        RecipientTypeDetails: row.RecipientType,
        PrimarySmtpAddress: row.PrimarySmtpAddress || row.Mail || upn,
        EmailAddresses: list(row.EmailAddresses),
        ExternalEmailAddress: blankToNull(row.ExternalEmailAddress),
        ExternalDirectoryObjectId: upn,
      });
    }
  });
  const seed = {
    users,
    recipients,
    groups: [...groups].map(([displayName, members]) => ({ displayName, members })),
  };
  // Row numbers in the CSV are the index + 2 (header line, 1-based).
  try {
    return parseTenantSeed(seed, path);
  } catch (error) {
    throw new TenantSeedError(
      (error as Error).message.replace(/users\.(\d+)/g, (_, index: string) => `row ${Number(index) + 2}`),
    );
  }
}

/** Fills a state from a seed: every object already replicated, so the tenant starts consistent. */
export function applySeed(state: TenantState, seed: TenantSeed): void {
  const createdDateTime = state.isoNow();
  const usersByUpn = new Map<string, DirectoryUser>();
  for (const input of seed.users) {
    const { id, mailNickname, identities, mail, givenName, surname, ...rest } = input;
    const user = newDirectoryUser(state, {
      ...rest,
      ...(id === undefined ? {} : { id }),
      ...(mailNickname === undefined ? {} : { mailNickname }),
      mail: mail ?? null,
      givenName: givenName ?? null,
      surname: surname ?? null,
      identities: identities ?? defaultIdentities(input, state.domains[0]!),
      createdDateTime,
    });
    state.users.seed(user);
    usersByUpn.set(user.userPrincipalName.toLowerCase(), user);
  }
  const userIdOf = (reference: string): string => usersByUpn.get(reference.toLowerCase())?.id ?? reference;

  for (const input of seed.groups) {
    const group: DirectoryGroup = {
      id: input.id ?? state.newId(),
      displayName: input.displayName,
      mailNickname: input.mailNickname ?? input.displayName.replace(/[^A-Za-z0-9]/g, "").toLowerCase(),
      mail: input.mail,
      description: input.description,
      groupTypes: input.groupTypes,
      securityEnabled: input.securityEnabled,
      mailEnabled: input.mailEnabled,
      members: input.members.map(userIdOf),
    };
    state.groups.seed(group);
  }

  const recipients: ExchangeRecipient[] = seed.recipients.map((input) => {
    const alias = input.Alias ?? input.Name.replace(/[^A-Za-z0-9._-]/g, "");
    const others = input.EmailAddresses.filter(
      (address) => address.toLowerCase() !== `smtp:${input.PrimarySmtpAddress.toLowerCase()}`,
    );
    return {
      Guid: input.Guid ?? state.newId(),
      Identity: input.Name,
      Name: input.Name,
      Alias: alias,
      DisplayName: input.DisplayName ?? input.Name,
      RecipientTypeDetails: input.RecipientTypeDetails,
      PrimarySmtpAddress: input.PrimarySmtpAddress,
      WindowsEmailAddress: input.PrimarySmtpAddress,
      EmailAddresses: [`SMTP:${input.PrimarySmtpAddress}`, ...others],
      ExternalEmailAddress:
        input.ExternalEmailAddress === null || /^smtp:/i.test(input.ExternalEmailAddress)
          ? input.ExternalEmailAddress
          : `SMTP:${input.ExternalEmailAddress}`,
      ExchangeGuid:
        input.ExchangeGuid ?? (input.RecipientTypeDetails === "MailUser" ? zeroGuid : state.newId()),
      ArchiveGuid: input.ArchiveGuid ?? zeroGuid,
      LegacyExchangeDN:
        input.LegacyExchangeDN ??
        `/o=ExchangeLabs/ou=Exchange Administrative Group (FYDIBOHF23SPDLT)/cn=Recipients/cn=${alias}`,
      ExternalDirectoryObjectId:
        input.ExternalDirectoryObjectId === null ? null : userIdOf(input.ExternalDirectoryObjectId),
      EmailAddressPolicyEnabled: input.EmailAddressPolicyEnabled,
      PreviousRecipientTypeDetails: input.PreviousRecipientTypeDetails,
      Members: [...input.Members],
    };
  });
  for (const recipient of recipients) provisionLicensedMailUser(state, recipient);
  // Group members may name recipients by Name or address: resolved once all recipients exist.
  const resolveMember = (reference: string, index: number, group: ExchangeRecipient): string => {
    const wanted = reference.toLowerCase();
    const found = recipients.find(
      (recipient) =>
        recipient.Guid.toLowerCase() === wanted ||
        recipient.Name.toLowerCase() === wanted ||
        recipient.EmailAddresses.some((address) => address.toLowerCase() === `smtp:${wanted}`),
    );
    if (found === undefined) {
      throw new TenantSeedError(
        `Tenant seed: recipients "${group.Name}" Members.${index} names no recipient`,
      );
    }
    return found.Guid;
  };
  for (const recipient of recipients) {
    recipient.Members = recipient.Members.map((member, index) => resolveMember(member, index, recipient));
    state.recipients.seed(recipient);
  }
}

const zeroGuid = "00000000-0000-0000-0000-000000000000";

function defaultIdentities(user: z.infer<typeof seedUserSchema>, domain: string) {
  if (user.userType === "Guest" || user.externalUserState !== null) {
    return [{ signInType: "federated", issuer: "ExternalAzureAD", issuerAssignedId: null }];
  }
  return [{ signInType: "userPrincipalName", issuer: domain, issuerAssignedId: user.userPrincipalName }];
}
