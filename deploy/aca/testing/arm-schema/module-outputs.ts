import { lineAt } from "../bicep-syntax/lexer.ts";
import type { BicepDeclarations } from "../bicep-syntax/declarations.ts";

/**
 * A module's `outputs` used whole (`foundation: foundation.outputs`). Bicep compiles it to
 * `reference(<deployment>).outputs`, whose entries are the deployment's `{ type, value }`
 * wrappers, not the values, so the receiving module reads `foundation.registryName` as an object
 * and the deployment fails with InvalidTemplate (Azure/bicep#16792, Azure/bicep#13947). Only
 * `<module>.outputs.<name>` (or `outputs['<name>']`) gives a value.
 */
export interface WholeOutputsFinding {
  readonly line: number;
  readonly module: string;
  readonly message: string;
}

export function wholeModuleOutputs(text: string, declarations: BicepDeclarations): WholeOutputsFinding[] {
  const modules = new Set(declarations.modules.map((module) => module.symbol));
  const tokens = declarations.tokens;
  const findings: WholeOutputsFinding[] = [];
  for (let i = 0; i + 2 < tokens.length; i += 1) {
    const [symbol, dot, outputs, after] = [tokens[i]!, tokens[i + 1]!, tokens[i + 2]!, tokens[i + 3]];
    if (symbol.kind !== "ident" || !modules.has(symbol.text)) continue;
    if (tokens[i - 1]?.text === "." || tokens[i - 1]?.text === "::") continue; // a member named like a module
    if (dot.text !== "." || outputs.kind !== "ident" || outputs.text !== "outputs") continue;
    if (after !== undefined && after.kind === "punct" && [".", ".?", "["].includes(after.text)) continue;
    findings.push({
      line: lineAt(text, symbol.offset),
      module: symbol.text,
      message:
        `'${symbol.text}.outputs' passes module ${symbol.text}'s outputs whole: Bicep compiles it to ` +
        "reference(...).outputs, whose entries are { type, value } wrappers, not values " +
        `(Azure/bicep#16792); pass each output (${symbol.text}.outputs.<name>) instead`,
    });
  }
  return findings;
}
