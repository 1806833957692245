import type { TenantState } from "../tenant-state.ts";
import type { ParameterSpec } from "./parameter-binding.ts";

/** What a cmdlet returns: its output objects and `@adminapi.warnings`. */
export interface CmdletOutput {
  readonly value: readonly Record<string, unknown>[];
  readonly warnings?: readonly string[];
}

/** Bound parameters: canonical names (as declared), values already checked against their kind. */
export type BoundParameters = Readonly<Record<string, unknown>>;

/**
 * One simulated cmdlet: the parameters it declares (anything else is refused the way PowerShell
 * parameter binding refuses it) and what it does to the tenant state.
 */
export interface CmdletDefinition {
  readonly name: string;
  readonly parameters: Readonly<Record<string, ParameterSpec>>;
  run(parameters: BoundParameters, state: TenantState): CmdletOutput;
}

export function cmdletTable(
  ...families: readonly (readonly CmdletDefinition[])[]
): ReadonlyMap<string, CmdletDefinition> {
  const table = new Map<string, CmdletDefinition>();
  for (const cmdlet of families.flat()) table.set(cmdlet.name.toLowerCase(), cmdlet);
  return table;
}
