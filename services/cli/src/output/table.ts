/** A column of a table: how to read the cell from a row and whether it may be cut to fit. */
export interface Column<T> {
  readonly header: string;
  readonly value: (row: T) => unknown;
  readonly align?: "left" | "right";
  /** Free text (errors, names): cut with "…" when the table is wider than the terminal. */
  readonly shrink?: boolean;
}

export interface TableOptions {
  /** The terminal's width; only given on a TTY, so piped output is never truncated. */
  readonly maxWidth?: number | undefined;
}

const GAP = "  ";
/** A shrinkable column is never cut below this (or its header), so it stays recognisable. */
const MIN_SHRUNK_WIDTH = 8;

/**
 * One line per row, columns padded to the widest cell, two spaces apart. On a terminal the
 * shrinkable columns are cut (widest first) until the table fits.
 */
export function formatTable<T>(
  rows: readonly T[],
  columns: readonly Column<T>[],
  options: TableOptions = {},
): string {
  const cells = rows.map((row) => columns.map((column) => formatCell(column.value(row))));
  const widths = columns.map((column, i) =>
    Math.max(column.header.length, ...cells.map((line) => line[i]?.length ?? 0)),
  );
  if (options.maxWidth !== undefined) fitWidths(widths, columns, options.maxWidth);
  const render = (line: readonly string[]) =>
    line
      .map((cell, i) => {
        const width = widths[i] ?? 0;
        const text = truncate(cell, width);
        return columns[i]?.align === "right" ? text.padStart(width) : text.padEnd(width);
      })
      .join(GAP)
      .trimEnd();
  return [render(columns.map((column) => column.header)), ...cells.map((line) => render(line))].join("\n");
}

function fitWidths<T>(widths: number[], columns: readonly Column<T>[], maxWidth: number): void {
  const total = () => widths.reduce((sum, width) => sum + width, 0) + GAP.length * (widths.length - 1);
  const floor = (i: number) => Math.max(MIN_SHRUNK_WIDTH, columns[i]?.header.length ?? 0);
  while (total() > maxWidth) {
    let widest = -1;
    widths.forEach((width, i) => {
      if (columns[i]?.shrink === true && width > floor(i) && (widest < 0 || width > (widths[widest] ?? 0)))
        widest = i;
    });
    if (widest < 0) return;
    widths[widest] = Math.max(floor(widest), (widths[widest] ?? 0) - (total() - maxWidth));
  }
}

function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** Labelled values, one per line, labels aligned: the human view of a single object. */
export function formatFields(fields: ReadonlyArray<readonly [string, unknown]>): string {
  const width = Math.max(...fields.map(([label]) => label.length)) + 1;
  return fields.map(([label, value]) => `${`${label}:`.padEnd(width)} ${formatCell(value)}`).join("\n");
}

/**
 * How a value reads in a cell: "-" for nothing, ISO 8601 for dates, yes/no, compact JSON for
 * objects. Control characters are replaced: cells hold text from the API (member keys, error
 * messages) that must neither break a row nor send escape sequences to the terminal.
 */
export function formatCell(value: unknown): string {
  if (value === null || value === undefined || value === "") return "-";
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "string") return printable(value);
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  return printable(JSON.stringify(value));
}

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

function printable(text: string): string {
  return text.replace(/\r\n|[\r\n\t]/g, " ").replace(CONTROL, "\ufffd");
}
