import iconv from "iconv-lite";

/**
 * A member CSV as it was received: its bytes and the charset of its Content-Type (UTF-8 by
 * default). It is never turned into one string: a 45 MB body as one string was 45 MB of V8 heap
 * per request (and as many again in the pieces it was joined from, copied by every minor GC),
 * while bytes stay outside the heap. Readers decode it in slices with iconv-lite, the decoder
 * body-parser's text parser used, so the text is the same: invalid UTF-8 becomes U+FFFD (which
 * text-problems.ts reports), a character split across two slices is joined, a leading UTF-8 BOM
 * is dropped.
 */
export class CsvUpload {
  /** The body as received, chunk by chunk (http/upload-body.ts): never joined into one buffer. */
  readonly chunks: readonly Buffer[];

  constructor(
    bytes: Uint8Array | readonly Uint8Array[],
    readonly charset = "utf-8",
  ) {
    if (!iconv.encodingExists(charset)) throw new Error(`unsupported charset ${charset}`);
    this.chunks = (Array.isArray(bytes) ? bytes : [bytes]).map((chunk: Uint8Array) =>
      Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength),
    );
  }

  /** An upload of `text` as UTF-8 (tests, and callers that already hold a string). */
  static ofText(text: string): CsvUpload {
    return new CsvUpload(Buffer.from(text, "utf8"));
  }

  /**
   * The text in pieces of about `sliceBytes` bytes each: what the readers scan and parse between
   * two event-loop turns.
   */
  *texts(sliceBytes = DEFAULT_SLICE_BYTES): Generator<string, void, undefined> {
    const decoder = iconv.getDecoder(this.charset);
    for (const chunk of this.chunks) {
      for (let start = 0; start < chunk.length; start += sliceBytes) {
        const text = decoder.write(chunk.subarray(start, start + sliceBytes));
        if (text !== "") yield text;
      }
    }
    const rest = decoder.end();
    if (rest !== undefined && rest !== "") yield rest;
  }

  /**
   * Its first non-blank character (blank as String#trim sees it, a BOM included), or "" when the
   * text is blank: what a body schema checks (`text.trim() !== ""` says the same of it as of the
   * whole text). Decoded only that far, which is the start of any real CSV.
   */
  leadingText(): string {
    for (const piece of this.texts()) {
      const first = piece.match(NOT_WHITE_SPACE);
      if (first !== null) return first[0];
    }
    return "";
  }
}

/** 64 kB: parsed in a few milliseconds, so a slice stays within the loop's budget. */
export const DEFAULT_SLICE_BYTES = 64 * 1024;

/** \s is exactly the set String#trim removes (WhiteSpace and LineTerminator, U+FEFF included). */
const NOT_WHITE_SPACE = /\S/u;
