import { templateVariablesIn } from "../templates/syntax.ts";
import { setOwn } from "./set-own.ts";

/** What a masked value reads as. */
export const MASKED = "***";

/**
 * THE list of names that say "this is a secret" (documented here only; ARCHITECTURE.md points
 * here), matched case-insensitively anywhere in a parameter, column, template variable or result
 * field name with `-`, `_`, `.` and spaces removed: `ClientSecret`, `password`, `Admin_Pwd`,
 * `api-key`, `RefreshToken`, `SigningKeyId`, `Credential`, `CertificatePfx`, `ConnectionString`,
 * `SasUrl`. Deliberately broad (`key` also hides a harmless `RoutingKey`): a masked value costs
 * the reader a look at the runbook, a shown secret cannot be taken back. Names this list misses
 * are marked in the runbook (`data_source.secret_columns`, a step's `secret_params`).
 */
const SECRET_NAME =
  /secret|password|passwd|pwd|passphrase|token|key|credential|certificate|connectionstring|sasuri|sasurl/i;

/** Answers by name, remembered: reads ask about the same few field names on every row. */
const secretByName = new Map<string, boolean>();
const MAX_REMEMBERED_NAMES = 10_000;

export function isSecretName(name: string): boolean {
  let secret = secretByName.get(name);
  if (secret === undefined) {
    secret = SECRET_NAME.test(name.replace(/[-_.\s]/g, ""));
    if (secretByName.size >= MAX_REMEMBERED_NAMES) secretByName.clear();
    secretByName.set(name, secret);
  }
  return secret;
}

export interface SecretParamRules {
  /** Whether a template variable is secret; the name list alone by default. */
  readonly isSecretVariable?: (name: string) => boolean;
  /** Top-level params marked `secret_params`. */
  readonly secretParams?: readonly string[];
}

/**
 * Step parameters as a read may show them: the value of every property whose name looks secret
 * ({@link isSecretName}), at any depth, becomes `***`, as does a top-level param marked secret,
 * and a value whose template in the runbook (`original`, the step's params as written) names a
 * secret variable (`Args: "-p {{AdminPassword}}"`). Arrays are walked; nothing else is changed.
 */
export function maskSecretParams(
  resolved: Readonly<Record<string, unknown>>,
  original: Readonly<Record<string, unknown>>,
  rules: SecretParamRules = {},
): Record<string, unknown> {
  const isSecretVariable = rules.isSecretVariable ?? isSecretName;
  const marked = new Set(rules.secretParams ?? []);
  return maskObject(resolved, original, (name) => marked.has(name), isSecretVariable);
}

/**
 * Template variables of a runbook string, remembered: reads mask every row with the same few
 * runbook strings, and parsing them again per row was most of a page's masking time.
 */
const variablesOfText = new Map<string, readonly string[]>();
const MAX_REMEMBERED_TEXTS = 10_000;

function templateVariablesOf(text: string): readonly string[] {
  if (!text.includes("{{")) return [];
  let variables = variablesOfText.get(text);
  if (variables === undefined) {
    variables = templateVariablesIn(text);
    if (variablesOfText.size >= MAX_REMEMBERED_TEXTS) variablesOfText.clear();
    variablesOfText.set(text, variables);
  }
  return variables;
}

function maskObject(
  resolved: Readonly<Record<string, unknown>>,
  original: unknown,
  isMarked: (name: string) => boolean,
  isSecretVariable: (name: string) => boolean,
): Record<string, unknown> {
  const masked: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(resolved)) {
    const source = isRecord(original) ? original[name] : undefined;
    setOwn(
      masked,
      name,
      isSecretName(name) || isMarked(name) ? MASKED : maskValue(value, source, isSecretVariable),
    );
  }
  return masked;
}

function maskValue(value: unknown, original: unknown, isSecretVariable: (name: string) => boolean): unknown {
  if (typeof original === "string" && templateVariablesOf(original).some(isSecretVariable)) return MASKED;
  if (Array.isArray(value)) {
    return value.map((item, index) =>
      maskValue(item, Array.isArray(original) ? original[index] : undefined, isSecretVariable),
    );
  }
  if (isRecord(value)) return maskObject(value, original, () => false, isSecretVariable);
  return value;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
