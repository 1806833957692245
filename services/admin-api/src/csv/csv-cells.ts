/**
 * CSV output (RFC 4180): fields joined by commas, records ended by CRLF, a field holding a comma,
 * a double quote, CR or LF quoted with its quotes doubled.
 *
 * Spreadsheet formula injection (OWASP "CSV Injection"): a cell that starts with `=`, `+`, `-` or
 * `@` (or a tab or CR, which some spreadsheets skip before looking for those) would be run as a
 * formula by Excel or LibreOffice when the file is opened, so it is prefixed with a single quote,
 * which makes the spreadsheet show it as text. Member keys and runbook names come from outside
 * (a data source, a runbook author), hence every cell, headers included, goes through this.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRecord(values: readonly (string | number | null | undefined)[]): string {
  return `${values.map(csvCell).join(",")}\r\n`;
}
