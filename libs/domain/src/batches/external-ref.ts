/**
 * A batch's external reference (issue 31): the change ticket or request id it belongs to, given
 * at manual create or read from the runbook's `data_source.external_ref_column`. It is shown in
 * lists, reports, webhooks and events, and searched exactly, so it is kept to a bounded, printable
 * single line: 1–128 characters, no control characters (C0, DEL, C1: no newline to forge a report
 * or log line, no NUL PostgreSQL would refuse) and no unpaired surrogate. Surrounding spaces are
 * trimmed, so " CHG-1 " and "CHG-1" are one reference.
 */
export const EXTERNAL_REF_MAX_LENGTH = 128;

const FORBIDDEN =
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must be found
  /[\u0000-\u001F\u007F-\u009F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export type ExternalRefCheck =
  { readonly ok: true; readonly value: string } | { readonly ok: false; readonly problem: string };

/** The trimmed reference, or why it is refused (the message never repeats the value). */
export function checkExternalRef(text: string): ExternalRefCheck {
  const value = text.trim();
  if (value === "") return { ok: false, problem: "must not be empty" };
  if (value.length > EXTERNAL_REF_MAX_LENGTH) {
    return { ok: false, problem: `must be at most ${EXTERNAL_REF_MAX_LENGTH} characters` };
  }
  if (FORBIDDEN.test(value)) {
    return { ok: false, problem: "must not contain control characters or unpaired surrogates" };
  }
  return { ok: true, value };
}

/**
 * The reference of a batch whose members carry it in a column (automated batches, or a manual
 * CSV with the column): the first member, in the order given, whose value is non-empty and valid.
 * Members of one batch usually agree (one ticket per wave); when they do not, the first wins and
 * the others are not an error, because refusing the batch would stop the migration over a label.
 * Values that are not text (numbers) are read as text; invalid ones are passed over.
 */
export function externalRefFromRows(
  rows: Iterable<Readonly<Record<string, unknown>>>,
  column: string,
): string | null {
  for (const row of rows) {
    const raw = row[column];
    if (typeof raw !== "string" && typeof raw !== "number") continue;
    const checked = checkExternalRef(String(raw));
    if (checked.ok) return checked.value;
  }
  return null;
}
