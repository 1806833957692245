import type { OutputStream } from "../context.ts";
import { formatFields, formatTable, type Column } from "./table.ts";

/**
 * What a command prints. With `--json` the API's JSON is written unchanged (one document, for
 * scripts); otherwise readable text: tables, labelled fields, short confirmations.
 */
export class Output {
  constructor(
    private readonly stdout: OutputStream,
    readonly json: boolean,
  ) {}

  /** Whether the human view is going to a terminal (progress may then be redrawn in place). */
  get isTTY(): boolean {
    return this.stdout.isTTY === true;
  }

  /** The terminal's width, when there is a terminal. */
  get columns(): number | undefined {
    return this.isTTY ? this.stdout.columns : undefined;
  }

  /** The API's answer: as JSON with `--json`, else through `human`. */
  result<T>(value: T, human: (value: T) => void): void {
    if (this.json) this.writeJson(value);
    else human(value);
  }

  writeJson(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** One compact JSON document per line (NDJSON), for streams such as `batch watch --json`. */
  writeJsonLine(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  line(text = ""): void {
    this.stdout.write(`${text}\n`);
  }

  raw(text: string): void {
    this.stdout.write(text);
  }

  table<T>(rows: readonly T[], columns: readonly Column<T>[], empty: string): void {
    if (rows.length === 0) {
      this.line(empty);
      return;
    }
    // Truncate on a terminal only: piped output keeps every character for grep and friends.
    this.line(formatTable(rows, columns, { maxWidth: this.columns }));
  }

  fields(fields: ReadonlyArray<readonly [string, unknown]>): void {
    this.line(formatFields(fields));
  }
}
