import { lineAt } from "../bicep-syntax/lexer.ts";
import { readDeclarations, type BicepResource } from "../bicep-syntax/declarations.ts";
import type { BicepNode } from "../bicep-syntax/parser.ts";
import { BICEP_API_VERSION_OVERRIDES, SDK_SCHEMAS, UNCOVERED } from "./coverage.ts";
import { propertyTree } from "./mapper-tree.ts";
import { wholeModuleOutputs } from "./module-outputs.ts";
import { sdkModel } from "./sdk-mappers.ts";
import { ModelValidator } from "./validate.ts";

/**
 * Every resource of the given Bicep files against its type's SDK model (coverage.ts), and every
 * module output passed whole. A problem names file, line, resource and property path.
 */
export interface BicepFileText {
  /** As shown in messages, e.g. deploy/aca/modules/network.bicep. */
  readonly path: string;
  readonly text: string;
}

export interface SchemaCheck {
  readonly problems: string[];
  /** type@apiVersion checked, with the package it was checked against. */
  readonly checked: Map<string, string>;
  /** Types found in the files and listed in UNCOVERED, with the reason. */
  readonly uncovered: Map<string, string>;
}

/** Keys of a resource body that Bicep itself handles (https://learn.microsoft.com/azure/azure-resource-manager/bicep/resource-declaration). */
const BICEP_KEYS = new Set(["name", "parent", "scope", "dependsOn"]);
/** An existing resource's body names it only (https://learn.microsoft.com/azure/azure-resource-manager/bicep/existing-resource). */
const EXISTING_KEYS = new Set(["name", "parent", "scope"]);

export function checkBicepFiles(repoRoot: string, files: readonly BicepFileText[]): SchemaCheck {
  const result: SchemaCheck = { problems: [], checked: new Map(), uncovered: new Map() };
  for (const file of files) {
    let declarations;
    try {
      declarations = readDeclarations(file.text);
    } catch (error) {
      // The reader reports offsets; a person wants the line.
      const message = (error as Error).message.replace(
        /at offset (\d+)/,
        (_, offset: string) => `on line ${lineAt(file.text, Number(offset))}`,
      );
      result.problems.push(`${file.path}: not readable as Bicep: ${message}`);
      continue;
    }
    for (const resource of declarations.resources) checkResource(repoRoot, file, resource, result);
    for (const finding of wholeModuleOutputs(file.text, declarations))
      result.problems.push(`${file.path}:${finding.line}: ${finding.message}`);
  }
  return result;
}

function checkResource(
  repoRoot: string,
  file: BicepFileText,
  resource: BicepResource,
  result: SchemaCheck,
): void {
  const where = `${file.path}:${resource.line}: resource ${resource.symbol} '${resource.type}@${resource.apiVersion}'`;
  const uncovered = UNCOVERED.get(resource.type);
  if (uncovered !== undefined) {
    result.uncovered.set(resource.type, uncovered);
    return;
  }
  const schema = SDK_SCHEMAS.get(resource.type);
  if (schema === undefined) {
    result.problems.push(
      `${where}: type not checked: add it to SDK_SCHEMAS or, with the reason, to UNCOVERED (deploy/aca/testing/arm-schema/coverage.ts)`,
    );
    return;
  }
  const expected = BICEP_API_VERSION_OVERRIDES.get(resource.type) ?? schema.apiVersion;
  if (resource.apiVersion !== expected)
    result.problems.push(
      `${where}: api version ${resource.apiVersion}, but the schema checked is ${schema.sdk} ${schema.sdkVersion} for ${expected}`,
    );
  const model = sdkModel(repoRoot, schema);
  if (model.apiVersion !== schema.apiVersion)
    result.problems.push(
      `${where}: ${schema.sdk} ${schema.sdkVersion} creates it with api-version ${model.apiVersion}, not ${schema.apiVersion}`,
    );
  result.checked.set(
    `${resource.type}@${resource.apiVersion}`,
    `${schema.sdk}@${schema.sdkVersion} (${model.apiVersion}, ${model.body.type.className})`,
  );
  const body = unwrap(resource.value);
  if (body.kind !== "object") {
    result.problems.push(`${where}: the body is not an object literal`);
    return;
  }
  const validator = new ModelValidator(model);
  if (resource.existing) {
    for (const entry of body.entries)
      if (entry.key === null || !EXISTING_KEYS.has(entry.key))
        validator.report(
          entry.offset,
          entry.key ?? "[*]",
          "an existing resource takes only name, parent and scope",
        );
  } else {
    const tree = propertyTree(model, model.body, schema.additions?.properties);
    validator.checkObject(body, tree, "", BICEP_KEYS);
  }
  for (const finding of validator.findings)
    result.problems.push(
      `${file.path}:${lineAt(file.text, finding.offset)}: resource ${resource.symbol} '${resource.type}@${resource.apiVersion}': ${finding.path}: ${finding.message}`,
    );
}

/** The object a resource declares, through `[for …: …]` and `if (…)`. */
function unwrap(node: BicepNode): BicepNode {
  return node.kind === "for" || node.kind === "if" ? unwrap(node.body) : node;
}
