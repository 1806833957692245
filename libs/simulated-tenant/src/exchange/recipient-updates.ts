import type { ExchangeRecipient } from "../model.ts";
import type { TenantState } from "../tenant-state.ts";
import { invalidValue, proxyAddressExists } from "./cmdlet-error.ts";
import type { MultiValue } from "./parameter-binding.ts";
import {
  bareSmtp,
  formatProxyAddress,
  isPrimarySmtp,
  isSmtp,
  looksLikeSmtp,
  parseProxyAddress,
  proxyKey,
  sameProxyAddress,
} from "./proxy-addresses.ts";

/** The recipient properties Set-Mailbox / Set-MailUser can change in Exchange Online. */
export interface RecipientChanges {
  readonly EmailAddresses?: MultiValue;
  readonly WindowsEmailAddress?: string;
  readonly ExternalEmailAddress?: string;
  readonly ExchangeGuid?: string;
  readonly ArchiveGuid?: string;
  readonly DisplayName?: string;
}

/**
 * Applies a Set-* to a copy of the recipient, with Exchange Online's rules: WindowsEmailAddress
 * makes the address primary whatever `EmailAddressPolicyEnabled` reads, since "in Exchange
 * Online, email address policies are available only for Microsoft 365 Groups"
 * (MicrosoftDocs/office-docs-powershell New-EmailAddressPolicy.md), so no mailbox or mail user
 * is subject to one (Set-Mailbox.md / Set-MailUser.md -WindowsEmailAddress: it has no effect only
 * on a recipient subject to a policy); the old primary stays as a secondary; an address
 * already on this recipient is not added twice; an address owned by another recipient (primary
 * view: uniqueness never waits for replication) is a ProxyAddressExistsException. Returns the
 * names of the properties that really changed (none: the cmdlet warns instead of writing), so a
 * Set-* re-sent with the values the recipient already has is a no-op.
 */
export function applyRecipientChanges(
  state: TenantState,
  current: ExchangeRecipient,
  changes: RecipientChanges,
): { readonly updated: ExchangeRecipient; readonly changed: readonly string[] } {
  const next = structuredClone(current);
  if (changes.DisplayName !== undefined) next.DisplayName = changes.DisplayName;
  if (changes.EmailAddresses !== undefined) editAddresses(next, changes.EmailAddresses);
  if (changes.WindowsEmailAddress !== undefined) {
    const address = validSmtp(changes.WindowsEmailAddress);
    if (address.toLowerCase() !== next.PrimarySmtpAddress.toLowerCase()) setPrimary(next, address);
  }
  // Exchange compares typed values: a proxy address or a GUID that differs only in case is the
  // same value, so setting it again modifies nothing.
  if (changes.ExternalEmailAddress !== undefined) {
    const external = parseProxyAddress(changes.ExternalEmailAddress);
    const formatted = formatProxyAddress({
      prefix: external.prefix.toLowerCase() === "smtp" ? "SMTP" : external.prefix,
      address: external.address,
    });
    if (next.ExternalEmailAddress === null || !sameProxyAddress(next.ExternalEmailAddress, formatted))
      next.ExternalEmailAddress = formatted;
  }
  if (changes.ExchangeGuid !== undefined && !sameGuid(next.ExchangeGuid, changes.ExchangeGuid))
    next.ExchangeGuid = changes.ExchangeGuid;
  if (changes.ArchiveGuid !== undefined && !sameGuid(next.ArchiveGuid, changes.ArchiveGuid))
    next.ArchiveGuid = changes.ArchiveGuid;

  assertUniqueAddresses(state, current, next);
  const changed = (Object.keys(next) as (keyof ExchangeRecipient)[]).filter(
    (key) => JSON.stringify(next[key]) !== JSON.stringify(current[key]),
  );
  return { updated: next, changed };
}

function sameGuid(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

function validSmtp(value: string): string {
  const address = bareSmtp(value);
  if (!looksLikeSmtp(address)) throw invalidValue("The primary SMTP address is not a valid SMTP address.");
  return address;
}

function editAddresses(recipient: ExchangeRecipient, value: MultiValue): void {
  if (value.mode === "replace") {
    const primaries = value.values.filter(isPrimarySmtp);
    if (primaries.length !== 1)
      throw invalidValue("EmailAddresses must contain exactly one primary (SMTP:) address.");
    recipient.EmailAddresses = dedupe(value.values.map(normalised));
    recipient.PrimarySmtpAddress = bareSmtp(primaries[0]!);
    recipient.WindowsEmailAddress = recipient.PrimarySmtpAddress;
    return;
  }
  for (const address of value.remove) {
    if (sameProxyAddress(address, `SMTP:${recipient.PrimarySmtpAddress}`)) {
      throw invalidValue("The primary SMTP address can't be removed; set another primary first.");
    }
    recipient.EmailAddresses = recipient.EmailAddresses.filter(
      (existing) => !sameProxyAddress(existing, address),
    );
  }
  for (const address of value.add) {
    const formatted = normalised(address);
    if (isPrimarySmtp(formatted)) {
      setPrimary(recipient, bareSmtp(formatted));
    } else if (!recipient.EmailAddresses.some((existing) => sameProxyAddress(existing, formatted))) {
      recipient.EmailAddresses.push(formatted);
    }
  }
}

/** The new primary becomes `SMTP:`, the old one stays as a secondary `smtp:` (Exchange's behaviour). */
function setPrimary(recipient: ExchangeRecipient, address: string): void {
  const others = recipient.EmailAddresses.filter(
    (existing) => !sameProxyAddress(existing, `smtp:${address}`),
  ).map((existing) => (isPrimarySmtp(existing) ? `smtp:${bareSmtp(existing)}` : existing));
  recipient.EmailAddresses = [`SMTP:${address}`, ...others];
  recipient.PrimarySmtpAddress = address;
  recipient.WindowsEmailAddress = address;
}

function normalised(address: string): string {
  const parsed = parseProxyAddress(address);
  if (isSmtp(address) && !looksLikeSmtp(parsed.address))
    throw invalidValue("An SMTP proxy address is not valid.");
  return formatProxyAddress(parsed);
}

function dedupe(addresses: readonly string[]): string[] {
  const seen = new Set<string>();
  return addresses.filter((address) => {
    const key = proxyKey(address);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Every address the recipient gains must be free in the whole organisation (primary view). */
export function assertUniqueAddresses(
  state: TenantState,
  current: ExchangeRecipient | undefined,
  next: ExchangeRecipient,
): void {
  const had = new Set((current?.EmailAddresses ?? []).map(proxyKey));
  const gained = next.EmailAddresses.filter((address) => !had.has(proxyKey(address)));
  if (gained.length === 0) return;
  for (const other of state.recipients.list("primary")) {
    if (other.Guid === next.Guid) continue;
    const owned = new Set(other.EmailAddresses.map(proxyKey));
    if (other.LegacyExchangeDN !== "") owned.add(proxyKey(`X500:${other.LegacyExchangeDN}`));
    const clash = gained.find((address) => owned.has(proxyKey(address)));
    if (clash !== undefined) throw proxyAddressExists(clash, other.Name);
  }
}
