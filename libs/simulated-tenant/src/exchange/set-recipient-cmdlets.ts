import type { TenantState } from "../tenant-state.ts";
import type { BoundParameters, CmdletDefinition, CmdletOutput } from "./cmdlet.ts";
import { parametersOf } from "./exchange-online-parameters.ts";
import type { MultiValue } from "./parameter-binding.ts";
import { resolveRecipient, type RecipientFamily } from "./recipient-lookup.ts";
import { applyRecipientChanges, type RecipientChanges } from "./recipient-updates.ts";

/**
 * Set-Mailbox and Set-MailUser: resolve `-Identity` on the primary (a write reaches the object
 * even before its creation has replicated), apply the changes with Exchange's address rules, and
 * answer a no-op with the real "no settings have been modified" warning instead of writing.
 */
export const setRecipientCmdlets: readonly CmdletDefinition[] = [
  {
    name: "Set-Mailbox",
    parameters: parametersOf("Set-Mailbox"),
    run: (parameters, state) => set("Set-Mailbox", parameters, state, "mailbox"),
  },
  {
    name: "Set-MailUser",
    parameters: parametersOf("Set-MailUser"),
    run: (parameters, state) => set("Set-MailUser", parameters, state, "mailUser"),
  },
];

function set(
  cmdlet: string,
  parameters: BoundParameters,
  state: TenantState,
  family: RecipientFamily,
): CmdletOutput {
  const current = resolveRecipient(state, parameters.Identity as string, family, "primary");
  const changes: RecipientChanges = {
    EmailAddresses: parameters.EmailAddresses as MultiValue | undefined,
    // Set-MailUser -PrimarySmtpAddress binds but is "functional only in on-premises Exchange".
    WindowsEmailAddress: parameters.WindowsEmailAddress as string | undefined,
    ExternalEmailAddress: parameters.ExternalEmailAddress as string | undefined,
    ExchangeGuid: parameters.ExchangeGuid as string | undefined,
    ArchiveGuid: parameters.ArchiveGuid as string | undefined,
    DisplayName: parameters.DisplayName as string | undefined,
  };
  const { updated, changed } = applyRecipientChanges(state, current, changes);
  if (changed.length === 0) {
    return {
      value: [],
      warnings: [
        `The command completed successfully but no settings of '${current.Identity}' have been modified.`,
      ],
    };
  }
  state.recipients.put(updated);
  const detail = changed
    .map((key) => `${key}=${JSON.stringify(updated[key as keyof typeof updated])}`)
    .join("; ");
  state.recordChange({ api: "exchange", operation: cmdlet, target: current.Identity, detail });
  return { value: [] };
}
