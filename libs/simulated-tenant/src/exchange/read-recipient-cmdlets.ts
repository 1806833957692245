import type { TenantState } from "../tenant-state.ts";
import type { BoundParameters, CmdletDefinition, CmdletOutput } from "./cmdlet.ts";
import { parametersOf } from "./exchange-online-parameters.ts";
import {
  listRecipients,
  recipientOutput,
  resolveRecipient,
  type RecipientFamily,
} from "./recipient-lookup.ts";

/**
 * Get-Recipient, Get-Mailbox, Get-MailUser: read from the replica view, so a recipient written a
 * moment ago may not be visible yet (as in Exchange Online). Get-Mailbox / Get-MailUser only see
 * their own kind: the other kind is ManagementObjectNotFoundException, as the real cmdlets answer.
 */
export const readRecipientCmdlets: readonly CmdletDefinition[] = [
  {
    name: "Get-Recipient",
    parameters: parametersOf("Get-Recipient"),
    run: (parameters, state) => read(parameters, state, "any"),
  },
  {
    name: "Get-Mailbox",
    parameters: parametersOf("Get-Mailbox"),
    run: (parameters, state) => read(parameters, state, "mailbox"),
  },
  {
    name: "Get-MailUser",
    parameters: parametersOf("Get-MailUser"),
    run: (parameters, state) => read(parameters, state, "mailUser"),
  },
];

export function read(parameters: BoundParameters, state: TenantState, family: RecipientFamily): CmdletOutput {
  const identity = parameters.Identity as string | undefined;
  if (identity !== undefined)
    return { value: [recipientOutput(resolveRecipient(state, identity, family, "replica"))] };
  const limit = (parameters.ResultSize as number | undefined) ?? 1000;
  const all = listRecipients(state, family, "replica");
  const warnings =
    all.length > limit
      ? [
          `By default, only the first ${limit} items are returned. Use the ResultSize parameter to specify the number of items returned.`,
        ]
      : [];
  return { value: all.slice(0, limit).map(recipientOutput), warnings };
}
