import { MemberDataError, serializeMemberData, type DataSourceConfig } from "@matoolkit/domain";
import { SourceRowError } from "./source-row-error.ts";

type MultiValuedColumn = DataSourceConfig["multiValuedColumns"][number];

/** Writes one row's data_json; see createMemberDataWriter. */
export interface MemberDataWriter {
  /** The row's member data as JSON text; throws a SourceRowError for text PostgreSQL refuses. */
  write(row: Readonly<Record<string, unknown>>, rowNumber: number): string;
  /**
   * The first error converting a value of the row last written (a malformed multi-valued
   * cell), or undefined. Left for the caller to throw once the row's key and batch time are
   * checked, so that a row with several problems reports the one it always did (text, key,
   * batch time, then data).
   */
  readonly conversionError: unknown;
}

/**
 * Writes a source row's data_json (what `serializeMemberData` makes of it) straight as JSON text,
 * the form staging sends to PostgreSQL: a tick over a million rows builds no data objects. Also
 * refuses text PostgreSQL cannot store, naming the row and column only.
 *
 * The text is jsonb's own rendering whenever the values allow (keys ordered as jsonb orders them,
 * `": "` and `", "` between items): the tick compares it with each member's stored data as text
 * before parsing anything, so an unchanged member, the usual case, costs no parse. Values jsonb
 * renders differently (nested objects, exponents) only lose that shortcut, never correctness.
 */
export function createMemberDataWriter(multiValuedColumns: readonly MultiValuedColumn[]): MemberDataWriter {
  const formats = new Map(multiValuedColumns.map((column) => [column.name, column]));
  let shape: RowShape | undefined;
  const dates = { ms: Number.NaN, json: "" };
  const writer = {
    conversionError: undefined as unknown,
    write(row: Readonly<Record<string, unknown>>, rowNumber: number): string {
      const names = Object.keys(row);
      writer.conversionError = undefined;
      if (names.length === 0) return "{}";
      if (shape === undefined || !sameNames(shape.names, names)) shape = shapeOf(names, formats);
      const { pieces, keys, slots, multiValued } = shape;
      let complete = true;
      for (let index = 0; index < names.length; index++) {
        if (index === shape.unstorableName) {
          throw new SourceRowError(
            `row ${rowNumber}: a column name contains a NUL character or an unpaired surrogate`,
          );
        }
        const name = names[index] as string;
        const value = row[name];
        const column = multiValued[index];
        let json: string | undefined;
        if (typeof value === "string" && column === undefined) {
          // The common case, kept free of the general path's checks and allocations.
          if (!isStorableText(value)) throw unstorableValue(rowNumber, name);
          json = quote(value);
        } else {
          if (hasUnstorableText(value)) throw unstorableValue(rowNumber, name);
          try {
            json =
              column === undefined
                ? valueJson(value, name, dates)
                : typeof value === "string"
                  ? delimitedJson(value, column, rowNumber)
                  : listJson(value, column, rowNumber);
          } catch (error) {
            writer.conversionError ??=
              error instanceof MemberDataError
                ? new SourceRowError(`row ${rowNumber}: ${error.message}`)
                : error;
          }
        }
        const slot = slots[index] as number;
        if (json === undefined) {
          complete = false;
          pieces[slot] = undefined;
        } else {
          pieces[slot] = (keys[index] as string) + json;
        }
      }
      if (complete) return `${pieces.join(", ")}}`;
      // A value JSON leaves out (undefined): the first piece may not carry the opening brace.
      const present = pieces
        .map((piece, slot) => (piece === undefined ? undefined : piece.slice(shape!.keyStarts[slot])))
        .filter((piece) => piece !== undefined);
      return `{${present.join(", ")}}`;
    },
  };
  return writer;
}

/** What is the same for every row with one column list (a source's rows share one). */
interface RowShape {
  readonly names: readonly string[];
  /**
   * Each column's JSON key with its separator, `"DisplayName": `; the column first in jsonb's
   * order also carries the object's opening brace, so a row is one join of its pieces.
   */
  readonly keys: readonly string[];
  /** Each column's position in jsonb's key order: shorter UTF-8 first, then bytewise. */
  readonly slots: readonly number[];
  /** Per position in jsonb's order: where the key starts in its piece (after a leading brace). */
  readonly keyStarts: readonly number[];
  readonly multiValued: readonly (MultiValuedColumn | undefined)[];
  /** Position of the first column name PostgreSQL cannot store; -1 when none. */
  readonly unstorableName: number;
  /** The row's pieces in jsonb's order, reused row after row. */
  readonly pieces: (string | undefined)[];
}

function shapeOf(names: readonly string[], formats: ReadonlyMap<string, MultiValuedColumn>): RowShape {
  const bytes = names.map((name) => Buffer.from(name, "utf8"));
  const order = names
    .map((_, index) => index)
    .sort((a, b) => {
      const left = bytes[a] as Buffer;
      const right = bytes[b] as Buffer;
      return left.length - right.length || Buffer.compare(left, right);
    });
  const slots = new Array<number>(names.length);
  order.forEach((index, slot) => (slots[index] = slot));
  return {
    names,
    keys: names.map((name, index) => `${slots[index] === 0 ? "{" : ""}${JSON.stringify(name)}: `),
    slots,
    keyStarts: order.map((_, slot) => (slot === 0 ? 1 : 0)),
    multiValued: names.map((name) => formats.get(name)),
    unstorableName: names.findIndex((name) => !isStorableText(name)),
    pieces: new Array<string | undefined>(names.length),
  };
}

function sameNames(known: readonly string[], names: readonly string[]): boolean {
  if (known.length !== names.length) return false;
  for (let index = 0; index < names.length; index++) if (known[index] !== names[index]) return false;
  return true;
}

/** One value as serializeMemberData leaves it, in JSON; undefined when JSON drops it (undefined). */
function valueJson(value: unknown, name: string, dates: { ms: number; json: string }): string | undefined {
  switch (typeof value) {
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      return `"${value}"`;
    case "undefined":
      return undefined;
    default:
      if (value === null) return "null";
      if (value instanceof Date) {
        // A batch time column repeats a few instants: each is formatted once.
        const ms = value.getTime();
        if (ms !== dates.ms) {
          dates.json = JSON.stringify(value.toISOString());
          dates.ms = ms;
        }
        return dates.json;
      }
      // Lists, maps, buffers: rare; the shared serializer decides, JSON.stringify writes it.
      return JSON.stringify(serializeMemberData({ [name]: value }, [])[name]);
  }
}

/**
 * A delimited multi-valued cell as a JSON list, split as `toMultiValued` splits it (trimmed,
 * empty parts dropped) without its per-call allocations; other formats go to the shared code.
 */
function delimitedJson(text: string, column: MultiValuedColumn, rowNumber: number): string {
  const delimiter =
    column.format === "semicolon_delimited" ? ";" : column.format === "comma_delimited" ? "," : undefined;
  if (delimiter === undefined) return listJson(text, column, rowNumber);
  let json = "[";
  for (const raw of text.split(delimiter)) {
    const part = raw.trim();
    if (part !== "") json += json.length === 1 ? quote(part) : `, ${quote(part)}`;
  }
  return `${json}]`;
}

/** JSON.stringify for a string, without its call for the usual string that needs no escape. */
function quote(text: string): string {
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    // Control characters, `"` and `\`: the ones JSON escapes.
    if (unit < 0x20 || unit === 0x22 || unit === 0x5c) return JSON.stringify(text);
  }
  return `"${text}"`;
}

function listJson(value: unknown, column: MultiValuedColumn, rowNumber: number): string {
  const items = serializeMemberData({ [column.name]: value }, [column])[column.name] as string[];
  // A json_array cell's escapes (\u0000) can make text PostgreSQL refuses out of text it accepts.
  if (items.some((item) => !isStorableText(item))) throw unstorableValue(rowNumber, column.name);
  return `[${items.map((item) => JSON.stringify(item)).join(", ")}]`;
}

function unstorableValue(rowNumber: number, column: string): SourceRowError {
  return new SourceRowError(
    `row ${rowNumber}: column "${column}" contains a NUL character or an unpaired surrogate, which cannot be stored`,
  );
}

/** PostgreSQL's text and jsonb refuse NUL and UTF-16 surrogates without their pair. */
function isStorableText(text: string): boolean {
  return !text.includes("\0") && (text as string & { isWellFormed(): boolean }).isWellFormed();
}

function hasUnstorableText(value: unknown, depth = 0): boolean {
  if (typeof value === "string") return !isStorableText(value);
  if (depth > 64 || typeof value !== "object" || value === null || value instanceof Date) return false;
  if (Array.isArray(value)) return value.some((item) => hasUnstorableText(item, depth + 1));
  return Object.entries(value).some(
    ([key, item]) => !isStorableText(key) || hasUnstorableText(item, depth + 1),
  );
}
