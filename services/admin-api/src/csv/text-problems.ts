/**
 * Text the database cannot store, or that is already damaged, found before anything is parsed
 * or written: PostgreSQL refuses U+0000 in text and jsonb (it answered 500 before), a lone
 * UTF-16 surrogate (only reachable through a JSON `\ud800` escape) is refused by jsonb, and U+FFFD
 * is what the body parser makes of bytes that are not UTF-8 (a file saved as Windows-1252):
 * storing it would migrate "M�ller" to the target tenant. Problems say where, never the text.
 */
export type TextFlaw = "nul" | "lone-surrogate" | "not-utf8";

export function describeFlaw(flaw: TextFlaw): string {
  switch (flaw) {
    case "nul":
      return "contains a NUL character (U+0000), which cannot be stored";
    case "lone-surrogate":
      return "contains an unpaired UTF-16 surrogate (an invalid \\u escape)";
    case "not-utf8":
      return "is not valid UTF-8 (a byte sequence became U+FFFD); save the file as UTF-8";
    default: {
      const unreachable: never = flaw;
      return String(unreachable);
    }
  }
}

// Without the u flag a regex sees UTF-16 units: a high surrogate not followed by a low one, or a
// low one not preceded by a high one. (String#isWellFormed is not in this TypeScript lib yet.)
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The first flaw of one string, if any. */
export function flawOf(text: string): TextFlaw | undefined {
  if (text.includes("\0")) return "nul";
  if (loneSurrogate.test(text)) return "lone-surrogate";
  if (text.includes("\uFFFD")) return "not-utf8";
  return undefined;
}

export interface TextFlawAt {
  readonly line: number;
  readonly column: number;
  readonly flaw: TextFlaw;
}

/** One entry per damaged line (its first flaw), at most `limit`: a binary file is not listed whole. */
export function flawsByLine(text: string, limit = 20): TextFlawAt[] {
  if (flawOf(text) === undefined) return []; // the common case: one scan, no split
  const found: TextFlawAt[] = [];
  const lines = text.split(/\r\n|\n|\r/u);
  for (let index = 0; index < lines.length && found.length < limit; index++) {
    const line = lines[index] ?? "";
    const flaw = flawOf(line);
    if (flaw !== undefined) found.push({ line: index + 1, column: columnOf(line, flaw), flaw });
  }
  return found;
}

function columnOf(line: string, flaw: TextFlaw): number {
  switch (flaw) {
    case "nul":
      return line.indexOf("\0") + 1;
    case "not-utf8":
      return line.indexOf("\uFFFD") + 1;
    case "lone-surrogate":
      return line.search(loneSurrogate) + 1;
    default: {
      const unreachable: never = flaw;
      return Number(unreachable);
    }
  }
}

/** The first flaw in any key or string of a JSON value, with its path (`members.3`). */
export function jsonFlaw(value: unknown, path: string): { path: string; flaw: TextFlaw } | undefined {
  if (typeof value === "string") {
    const flaw = flawOf(value);
    return flaw === undefined ? undefined : { path, flaw };
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = jsonFlaw(item, `${path}.${index}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      // Keys are reported at the object: a damaged key may be a member's value typed as a column.
      const keyFlaw = flawOf(key);
      if (keyFlaw !== undefined) return { path, flaw: keyFlaw };
      const found = jsonFlaw(item, path);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * flawsByLine over a text that comes in pieces (an upload decoded slice by slice, csv-upload.ts),
 * pausing after each (time-slicer.ts): a 20 MB upload is scanned without holding the event loop
 * and without joining it into one string. Lines are scanned whole (a piece's text after its last
 * "\n" waits for the next piece), so the lines, columns and flaws are flawsByLine's on the whole.
 */
export async function flawsByLineOfPieces(
  pieces: Iterable<string>,
  pause: () => Promise<void> | undefined,
  limit = 20,
): Promise<TextFlawAt[]> {
  const found: TextFlawAt[] = [];
  let linesBefore = 0;
  const scan = (block: string) => {
    if (flawOf(block) !== undefined) {
      for (const flaw of flawsByLine(block, limit - found.length)) {
        found.push({ ...flaw, line: flaw.line + linesBefore });
      }
    }
    linesBefore += block.match(LINE_BREAKS)?.length ?? 0;
  };
  let partial = "";
  for (const piece of pieces) {
    if (found.length >= limit) break;
    const lastNewline = piece.lastIndexOf("\n");
    if (lastNewline === -1) {
      partial += piece;
    } else {
      scan(partial + piece.slice(0, lastNewline + 1));
      partial = piece.slice(lastNewline + 1);
    }
    await pause();
  }
  if (partial !== "" && found.length < limit) scan(partial);
  return found;
}

const LINE_BREAKS = /\r\n|\n|\r/gu;
