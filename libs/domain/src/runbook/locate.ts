import type { Document, LineCounter, Node as YamlNode } from "yaml";
import { isAlias, isMap, isPair, isScalar, isSeq } from "yaml";
import { scalarSourceOffset } from "./scalar-offset.ts";
import type { Finding, PathSegment, RunbookProblem } from "./problems.ts";
import { formatPath } from "./problems.ts";

interface Located {
  node: YamlNode | null;
  /** The key node of the last segment, when the path ended at a mapping entry. */
  keyNode: YamlNode | null;
}

function keyMatches(key: unknown, segment: PathSegment): boolean {
  return isScalar(key) ? String(key.value) === String(segment) : key === segment;
}

/** Walks the document along `path`, stopping at the deepest node that exists. */
function walk(document: Document, path: readonly PathSegment[]): Located {
  let node = (document.contents as YamlNode | null) ?? null;
  let keyNode: YamlNode | null = null;
  for (const segment of path) {
    if (node && isAlias(node)) node = (node.resolve(document) as YamlNode | undefined) ?? null;
    if (isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && keyMatches(item.key, segment));
      if (!pair) return { node, keyNode: null };
      keyNode = (pair.key as YamlNode | null) ?? null;
      node = (pair.value as YamlNode | null) ?? keyNode;
    } else if (isSeq(node) && typeof segment === "number") {
      const item = node.items[segment] as YamlNode | undefined;
      if (!item) return { node, keyNode: null };
      keyNode = null;
      node = item;
    } else {
      return { node, keyNode: null };
    }
  }
  return { node, keyNode };
}

/** `text`: the YAML the document was parsed from, to place a finding's `offset` inside a value. */
export function locateFinding(
  document: Document,
  lineCounter: LineCounter,
  finding: Finding,
  text?: string,
): RunbookProblem {
  const { node, keyNode } = walk(document, finding.path);
  const target = finding.anchor === "key" && keyNode ? keyNode : node;
  const offset =
    finding.offset !== undefined && text !== undefined && isScalar(target)
      ? scalarSourceOffset(text, target, finding.offset)
      : (target?.range?.[0] ?? 0);
  const { line, col } = lineCounter.linePos(offset);
  return { path: formatPath(finding.path), line, column: col, message: finding.message };
}
