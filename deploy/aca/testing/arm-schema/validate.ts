import type { BicepNode } from "../bicep-syntax/parser.ts";
import { propertyTree, resolveComposite, type PropertyTree } from "./mapper-tree.ts";
import type { Mapper, SdkModel } from "./sdk-mappers.ts";

/**
 * Checks a Bicep value against an SDK model (sdk-mappers.ts): every property name must exist in
 * the model (wire names, exact case), none may be readOnly, required ones must be present in an
 * object literal that has no spread, and a literal must have the property's type (string,
 * integer, bool, object, array; a closed enum's value among its allowed values). Computed values
 * (references, calls, operators) pass: their type is the compiler's business.
 */
export interface Finding {
  readonly offset: number;
  /** Property path from the resource body, e.g. properties.subnets[].properties.addressPrefix. */
  readonly path: string;
  readonly message: string;
}

const STRING_TYPES = new Set([
  "String",
  "Enum",
  "DateTime",
  "Date",
  "DateTimeRfc1123",
  "TimeSpan",
  "Uuid",
  "ByteArray",
  "Base64Url",
]);

export class ModelValidator {
  readonly findings: Finding[] = [];
  constructor(private readonly model: SdkModel) {}

  /** An object literal against a property tree; `skip` names keys that are not the model's. */
  checkObject(
    node: BicepNode & { kind: "object" },
    tree: PropertyTree,
    path: string,
    skip: ReadonlySet<string> = new Set(),
  ): void {
    const present = new Set<string>();
    let complete = true;
    for (const entry of node.entries) {
      if (entry.key === null || entry.key === "...") {
        complete = false;
        if (entry.key === null && tree.additional !== undefined)
          this.checkValue(entry.value, tree.additional, `${path}[*]`);
        continue;
      }
      present.add(entry.key);
      if (skip.has(entry.key)) continue;
      const at = path === "" ? entry.key : `${path}.${entry.key}`;
      const child = tree.children.get(entry.key);
      if (child === undefined) {
        if (tree.additional !== undefined) this.checkValue(entry.value, tree.additional, at);
        else
          this.report(
            entry.offset,
            at,
            `unknown property '${entry.key}' in ${tree.model}; ${closest(entry.key, [...tree.children.keys()])}`,
          );
      } else if ("tree" in child) {
        if (entry.value.kind === "object") this.checkObject(entry.value, child.tree, at);
        else this.checkShape(entry.value, "object", at);
      } else if (child.mapper.readOnly === true) {
        this.report(
          entry.offset,
          at,
          `'${entry.key}' is read-only in ${tree.model}: Azure sets it, a template cannot`,
        );
      } else this.checkValue(entry.value, child.mapper, at);
    }
    if (!complete) return;
    for (const [key, child] of tree.children) {
      const required = "mapper" in child && child.mapper.required === true && child.mapper.readOnly !== true;
      if (required && !present.has(key) && !skip.has(key))
        this.report(node.offset, path, `required property '${key}' of ${tree.model} is missing`);
    }
  }

  checkValue(node: BicepNode, mapper: Mapper, path: string): void {
    const type = mapper.type.name;
    if (node.kind === "ternary")
      return node.branches.forEach((branch) => this.checkValue(branch, mapper, path));
    if (node.kind === "expr" || node.kind === "null" || type === "Object") return;
    if (node.kind === "for" || node.kind === "array") {
      if (type !== "Sequence") return this.mismatch(node, "an array", mapper, path);
      const items = node.kind === "for" ? [node.body] : node.items;
      items.forEach((item) =>
        this.checkValue(item.kind === "if" ? item.body : item, mapper.type.element!, `${path}[]`),
      );
    } else if (node.kind === "object") {
      if (type === "Dictionary") {
        for (const entry of node.entries)
          if (entry.key !== "...")
            this.checkValue(entry.value, mapper.type.value!, `${path}.${entry.key ?? "[*]"}`);
      } else if (type === "Composite") {
        const discriminator =
          mapper.type.polymorphicDiscriminator?.serializedName ??
          resolveComposite(this.model, mapper).type.polymorphicDiscriminator?.serializedName;
        const literal = node.entries.find((entry) => entry.key === discriminator)?.value;
        const value = literal?.kind === "string" ? literal.value : undefined;
        this.checkObject(node, propertyTree(this.model, resolveComposite(this.model, mapper, value)), path);
      } else this.mismatch(node, "an object", mapper, path);
    } else if (node.kind === "string") {
      if (!STRING_TYPES.has(type)) return this.mismatch(node, "a string", mapper, path);
      const allowed = mapper.type.allowedValues;
      if (type === "Enum" && allowed !== undefined && node.value !== undefined) {
        const known = allowed.some((value) => String(value).toLowerCase() === node.value!.toLowerCase());
        if (!known)
          this.report(
            node.offset,
            path,
            `'${node.value}' is not one of ${allowed.map((v) => `'${String(v)}'`).join(", ")}`,
          );
      }
    } else if (node.kind === "number") {
      if (type !== "Number" && type !== "UnixTime") this.mismatch(node, "an integer", mapper, path);
    } else if (node.kind === "bool") {
      if (type !== "Boolean") this.mismatch(node, "a bool", mapper, path);
    }
  }

  /** A value under a flattened group (`properties`) must be an object. */
  private checkShape(node: BicepNode, expected: "object", path: string): void {
    if (node.kind === "ternary")
      return node.branches.forEach((branch) => this.checkShape(branch, expected, path));
    if (node.kind !== "expr" && node.kind !== "null")
      this.report(node.offset, path, `expected an object, found ${describe(node)}`);
  }

  private mismatch(node: BicepNode, found: string, mapper: Mapper, path: string): void {
    this.report(node.offset, path, `${found} where the model wants ${expectation(mapper)}`);
  }

  report(offset: number, path: string, message: string): void {
    this.findings.push({ offset, path, message });
  }
}

function describe(node: BicepNode): string {
  return node.kind === "for" ? "an array" : `a ${node.kind}`;
}

function expectation(mapper: Mapper): string {
  const type = mapper.type.name;
  if (STRING_TYPES.has(type)) return `a string (${type})`;
  if (type === "Number") return "an integer";
  if (type === "Boolean") return "a bool";
  if (type === "Sequence") return "an array";
  if (type === "Composite") return `an object (${mapper.type.className ?? "model"})`;
  if (type === "Dictionary") return "an object (dictionary)";
  return type;
}

/** "did you mean" with the three valid names nearest by edit distance (case-insensitive). */
export function closest(name: string, candidates: readonly string[]): string {
  const lower = name.toLowerCase();
  // Ties go to a name that extends or shortens the wrong one ('tag' → 'tags' before 'etag').
  const prefix = (candidate: string) => (candidate.startsWith(lower) || lower.startsWith(candidate) ? 0 : 1);
  const ranked = candidates
    .map((candidate) => ({ candidate, lower: candidate.toLowerCase() }))
    .map((entry) => ({ ...entry, distance: editDistance(lower, entry.lower), prefix: prefix(entry.lower) }))
    .sort((a, b) => a.distance - b.distance || a.prefix - b.prefix || a.candidate.localeCompare(b.candidate))
    .slice(0, 3)
    .map((entry) => `'${entry.candidate}'`);
  return ranked.length === 0 ? "the model has no properties" : `closest valid names: ${ranked.join(", ")}`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1)
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return previous[b.length]!;
}
