/**
 * Finds the Dapr configuration files of the repository and parses them into documents that can
 * point a problem back at its line. One YAML file may hold several documents (`---`).
 */
import { readdir, readFile } from "node:fs/promises";
import { join, posix, relative, sep } from "node:path";
import { isMap, isNode, isScalar, isSeq, LineCounter, parseAllDocuments } from "yaml";

/** One YAML document of a file, parsed, with a way to find the line of any path inside it. */
export interface DaprDocument {
  /** Repository-relative path with forward slashes, e.g. `components/local/pubsub.yaml`. */
  readonly file: string;
  /** Position of the document in its file (0 for the first). */
  readonly index: number;
  /** The document as plain data (merge keys `<<` resolved, as Docker Compose does). */
  readonly value: unknown;
  /** YAML syntax errors; a document with any is not validated further. */
  readonly syntaxErrors: readonly { readonly line: number | undefined; readonly message: string }[];
  /** 1-based line of the deepest node that exists along `path` (the whole document: its first line). */
  lineOf(path: readonly PropertyKey[]): number | undefined;
}

/** The folders and files `npm run dapr:validate` and the tests cover. */
export const daprConfigFolders = ["components", "dapr"] as const;
export const daprConfigRootFiles = [
  "dapr.yaml",
  "docker-compose.yml",
  "docker-compose.embedded.yml",
] as const;

const yamlExtension = /\.ya?ml$/;

/** Repository-relative paths (sorted) of every Dapr YAML file under `root`. */
export async function findDaprFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const folder of daprConfigFolders) {
    const entries = await readdir(join(root, folder), { recursive: true, withFileTypes: true }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return [];
        throw error;
      },
    );
    for (const entry of entries) {
      if (entry.isFile() && yamlExtension.test(entry.name)) {
        found.push(toRepoPath(relative(root, join(entry.parentPath, entry.name))));
      }
    }
  }
  for (const file of daprConfigRootFiles) {
    const present = await readFile(join(root, file)).then(
      () => true,
      () => false,
    );
    if (present) found.push(file);
  }
  return found.sort();
}

export async function loadDaprFile(root: string, file: string): Promise<DaprDocument[]> {
  return parseDaprYaml(file, await readFile(join(root, file), "utf8"));
}

export async function loadDaprFiles(root: string): Promise<DaprDocument[]> {
  const files = await findDaprFiles(root);
  const documents = await Promise.all(files.map((file) => loadDaprFile(root, file)));
  return documents.flat();
}

/** Parses YAML text (one or more documents) as if it were the file `file`. */
export function parseDaprYaml(file: string, text: string): DaprDocument[] {
  const lineCounter = new LineCounter();
  const parsed = parseAllDocuments(text, { lineCounter, merge: true, prettyErrors: false });
  // An empty file is an "empty stream", not a list: it holds no document to validate.
  if (!Array.isArray(parsed)) return [];
  const lineAt = (offset: number): number => lineCounter.linePos(offset).line;
  return parsed.map((document, index) => ({
    file,
    index,
    value: document.errors.length > 0 ? undefined : document.toJS({ maxAliasCount: 1000 }),
    syntaxErrors: document.errors.map((error) => ({ line: lineAt(error.pos[0]), message: error.message })),
    lineOf(path) {
      // Walk up until a node exists: a missing key is reported on the line of its parent's key.
      for (let length = path.length; length > 0; length -= 1) {
        const parent: unknown =
          length === 1 ? document.contents : document.getIn(path.slice(0, length - 1), true);
        const offset = offsetOfChild(parent, path[length - 1]);
        if (offset !== undefined) return lineAt(offset);
      }
      return document.range ? lineAt(document.range[0]) : undefined;
    },
  }));
}

/** Where a key of a map (the key itself, not its value) or an item of a sequence starts. */
function offsetOfChild(parent: unknown, segment: PropertyKey | undefined): number | undefined {
  if (isMap(parent)) {
    const pair = parent.items.find((item) => (isScalar(item.key) ? item.key.value : item.key) === segment);
    const key: unknown = pair?.key;
    return isNode(key) ? key.range?.[0] : undefined;
  }
  if (isSeq(parent) && typeof segment === "number") {
    const item: unknown = parent.items[segment];
    return isNode(item) ? item.range?.[0] : undefined;
  }
  return undefined;
}

function toRepoPath(path: string): string {
  return path.split(sep).join(posix.sep);
}
