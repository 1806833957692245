import { templateVariablesIn } from "../templates/syntax.ts";

/** What a masked value reads as. */
export const MASKED = "***";

/**
 * Names that say "this is a secret", matched case-insensitively anywhere in a parameter (or
 * template variable) name with `-`, `_`, `.` and spaces removed: `ClientSecret`, `password`,
 * `Admin_Pwd`, `api-key`, `RefreshToken`, `SigningKeyId`, `Credential`, `CertificatePfx`,
 * `ConnectionString`, `SasUrl`. Deliberately broad (`key` also hides a harmless `RoutingKey`): a
 * masked value costs the reader a look at the runbook, a shown secret cannot be taken back.
 */
const SECRET_NAME =
  /secret|password|passwd|pwd|passphrase|token|key|credential|certificate|connectionstring|sasuri|sasurl/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name.replace(/[-_.\s]/g, ""));
}

/**
 * Resolved step parameters as a dry-run may show them: the value of every property whose name
 * looks secret ({@link isSecretName}), at any depth, becomes `***`, and so does a value whose
 * template in the runbook (`original`, the step's params as written) names a secret-looking
 * variable (`Args: "-p {{AdminPassword}}"`). Arrays are walked; nothing else is changed.
 */
export function maskSecretParams(
  resolved: Readonly<Record<string, unknown>>,
  original: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return maskObject(resolved, original);
}

function maskObject(resolved: Readonly<Record<string, unknown>>, original: unknown): Record<string, unknown> {
  const masked: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(resolved)) {
    const source = isRecord(original) ? original[name] : undefined;
    // defineProperty: a parameter literally named "__proto__" stays data.
    Object.defineProperty(masked, name, {
      value: isSecretName(name) ? MASKED : maskValue(value, source),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return masked;
}

function maskValue(value: unknown, original: unknown): unknown {
  if (typeof original === "string" && templateVariablesIn(original).some(isSecretName)) return MASKED;
  if (Array.isArray(value)) {
    return value.map((item, index) => maskValue(item, Array.isArray(original) ? original[index] : undefined));
  }
  if (isRecord(value)) return maskObject(value, original);
  return value;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
