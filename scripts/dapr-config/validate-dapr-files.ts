/**
 * Validates parsed Dapr documents against the schema of their kind and turns every failure into
 * a problem that names the file, the line and the YAML path (e.g. `spec.metadata[2].value`).
 */
import { posix } from "node:path";
import type { z } from "zod";
import { unknownMetadataFieldProblems } from "./component-metadata-fields.ts";
import {
  componentSchema,
  composeSchema,
  configurationSchema,
  multiAppRunSchema,
  resiliencySchema,
  subscriptionSchema,
} from "./dapr-config-schemas.ts";
import type { DaprDocument } from "./load-dapr-files.ts";

export const daprFileKinds = [
  "Component",
  "Subscription",
  "Resiliency",
  "Configuration",
  "MultiAppRun",
  "Compose",
] as const;
export type DaprFileKind = (typeof daprFileKinds)[number];

const schemaOfKind: Record<DaprFileKind, z.ZodType> = {
  Component: componentSchema,
  Subscription: subscriptionSchema,
  Resiliency: resiliencySchema,
  Configuration: configurationSchema,
  MultiAppRun: multiAppRunSchema,
  Compose: composeSchema,
};

/** Kinds named by a document's own `kind` field (the others are recognised by file name). */
const resourceKinds = new Set<string>(["Component", "Subscription", "Resiliency", "Configuration"]);

export interface Problem {
  /** Repository-relative file (or folder, for a problem about a missing file). */
  readonly file: string;
  readonly line?: number;
  /** YAML path inside the document, e.g. `spec.metadata[0].secretKeyRef`; empty for the whole file. */
  readonly path: string;
  readonly message: string;
}

export interface DocumentReport {
  readonly document: DaprDocument;
  readonly kind: DaprFileKind | undefined;
  readonly problems: readonly Problem[];
}

/** `dapr.yaml` is the Multi-App Run template's default name; Compose files by their usual names. */
export function kindOfDocument(document: DaprDocument): DaprFileKind | undefined {
  const name = posix.basename(document.file);
  if (name === "dapr.yaml") return "MultiAppRun";
  if (/^(docker-)?compose(\.[\w-]+)?\.ya?ml$/.test(name)) return "Compose";
  const kind = (document.value as { kind?: unknown } | null | undefined)?.kind;
  return typeof kind === "string" && resourceKinds.has(kind) ? (kind as DaprFileKind) : undefined;
}

export function validateDocument(document: DaprDocument): DocumentReport {
  const problemAt = (
    path: readonly PropertyKey[],
    message: string,
    line = document.lineOf(path),
  ): Problem => ({
    file: document.file,
    line,
    path: formatYamlPath(path),
    message,
  });

  if (document.syntaxErrors.length > 0) {
    return {
      document,
      kind: undefined,
      problems: document.syntaxErrors.map((error) =>
        problemAt([], `YAML syntax: ${error.message}`, error.line),
      ),
    };
  }
  const kind = kindOfDocument(document);
  if (kind === undefined) {
    const declared = (document.value as { kind?: unknown } | null | undefined)?.kind;
    const message =
      declared === undefined
        ? "has no kind: expected a Dapr Component, Subscription, Resiliency or Configuration"
        : `unknown kind ${JSON.stringify(declared)}: expected Component, Subscription, Resiliency or Configuration`;
    return { document, kind, problems: [problemAt(declared === undefined ? [] : ["kind"], message)] };
  }
  const result = schemaOfKind[kind].safeParse(document.value);
  const problems = result.success
    ? kind === "Component"
      ? unknownMetadataFieldProblems(document)
      : []
    : result.error.issues.map((issue) => {
        // Point an unknown field at its own line rather than at the object that holds it.
        const keys = issue.code === "unrecognized_keys" ? issue.keys : [];
        const path = keys.length === 1 ? [...issue.path, keys[0] ?? ""] : issue.path;
        return problemAt(path, issue.message);
      });
  return { document, kind, problems };
}

export function validateDocuments(documents: readonly DaprDocument[]): DocumentReport[] {
  return documents.map(validateDocument);
}

/** `spec.metadata[2].secretKeyRef`; keys that are not plain identifiers are quoted. */
export function formatYamlPath(path: readonly PropertyKey[]): string {
  return path
    .map((segment, index) => {
      if (typeof segment === "number") return `[${segment}]`;
      const key = String(segment);
      if (/^[A-Za-z_$][\w$-]*$/.test(key)) return index === 0 ? key : `.${key}`;
      return `[${JSON.stringify(key)}]`;
    })
    .join("");
}

/** `components/local/pubsub.yaml:12 spec.metadata[0]: message` (the path is omitted when empty). */
export function formatProblem(problem: Problem): string {
  const where = problem.line === undefined ? problem.file : `${problem.file}:${problem.line}`;
  return problem.path === "" ? `${where} ${problem.message}` : `${where} ${problem.path}: ${problem.message}`;
}
