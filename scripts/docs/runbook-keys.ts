import type { z } from "zod";

/**
 * Every key a runbook may hold, read from the zod schemas the parser validates with
 * (libs/domain/src/runbook/yaml-schema.ts), as the paths docs/runbook-reference.md names them:
 * `data_source.multi_valued_columns[].name`, `phases[].approval`, `steps[].poll.interval`,
 * `rollbacks.<name>`. The step and retry mappings are used in several places; each is listed once,
 * under the name `shared` gives it (`steps[]`, `retry`); where it is used, only the key that holds it.
 */
export function runbookKeyPaths(root: z.ZodType, shared: ReadonlyMap<z.ZodType, string>): string[] {
  const paths = new Set<string>();
  const visited = new Set<z.ZodType>();

  const walk = (schema: z.ZodType, prefix: string): void => {
    const def = (schema as unknown as { _zod: { def: Definition } })._zod.def;
    switch (def.type) {
      case "optional":
      case "default":
      case "nullable":
        return walk(def.innerType!, prefix);
      case "pipe": // z.preprocess: the value is checked by the schema it is piped into
        return walk(def.out!, prefix);
      case "array":
        return walk(def.element!, `${prefix}[]`);
      case "record":
        // Named by the author: a key of its own only when what it names has a shape (a rollback's
        // steps), not for free-form maps such as `params`.
        if (isLeaf(def.valueType!)) return;
        paths.add(`${prefix}.<name>`);
        return walk(def.valueType!, `${prefix}.<name>`);
      case "object": {
        // A shared mapping is listed once under its own name, wherever it is used.
        const name = shared.get(schema);
        if (name !== undefined && prefix !== name) {
          if (!visited.has(schema)) {
            visited.add(schema);
            walk(schema, name);
          }
          return;
        }
        for (const [key, value] of Object.entries(def.shape!)) {
          const path = prefix === "" ? key : `${prefix}.${key}`;
          paths.add(path);
          walk(value, path);
        }
        return;
      }
      default:
        return; // a leaf: text, number, enum, literal, unknown
    }
  };
  walk(root, "");
  return [...paths].sort();
}

function isLeaf(schema: z.ZodType): boolean {
  const { type } = (schema as unknown as { _zod: { def: Definition } })._zod.def;
  return !["optional", "default", "nullable", "pipe", "array", "record", "object"].includes(type);
}

interface Definition {
  readonly type: string;
  readonly innerType?: z.ZodType;
  readonly out?: z.ZodType;
  readonly element?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly shape?: Record<string, z.ZodType>;
}

/**
 * The keys a Markdown reference documents: the first cell of each table row, when it is a single
 * code span (`` `phases[].approval` ``). Header and separator rows have none.
 */
export function documentedKeyPaths(markdown: string): string[] {
  const keys: string[] = [];
  for (const line of markdown.split("\n")) {
    const cell = /^\|\s*`([^`]+)`\s*\|/.exec(line);
    if (cell !== null) keys.push(cell[1]!);
  }
  return keys;
}
