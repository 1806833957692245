/**
 * Database error messages quote the offending value ("Conversion failed when converting the
 * nvarchar value 'jdoe' to data type int", "[CAST_INVALID_INPUT] The value 'x' ..."): a member's
 * data. SQL string literals are single-quoted, identifiers are not, so blanking single-quoted
 * text keeps the useful part (which column, which type) and drops the value.
 */
export function redactLiterals(message: string): string {
  return message.replace(/'(?:[^']|'')*'/gu, "'…'");
}

/** Removes each secret verbatim, whatever its shape (the generic sanitizer only knows common ones). */
export function redactSecrets(message: string, secrets: readonly string[]): string {
  let text = message;
  for (const secret of secrets) if (secret.length > 0) text = text.split(secret).join("[redacted]");
  return text;
}

/** A driver error reduced to text that is safe to put in a DataSourceError. */
export function describeDriverError(error: unknown, secrets: readonly string[] = []): string {
  const raw = error instanceof Error ? error.message || error.name : String(error);
  return redactLiterals(redactSecrets(raw, secrets));
}
