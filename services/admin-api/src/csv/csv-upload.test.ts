import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseRunbookOrThrow } from "@matoolkit/domain";
import { testRunbookYaml } from "../../test/api-test-harness.ts";
import { CsvUpload, DEFAULT_SLICE_BYTES } from "./csv-upload.ts";
import { parseMembersCsv } from "./parse-members-csv.ts";
import { flawsByLine, flawsByLineOfPieces } from "./text-problems.ts";
import { uploadFingerprint } from "./upload-fingerprint.ts";

/**
 * Issue 25, finding 4: a member upload is kept as bytes and decoded in slices, never as one
 * string; what the readers see must be what the whole text decoded at once would have been.
 */
const dataSource = parseRunbookOrThrow(testRunbookYaml({ name: "csv-upload" })).dataSource;
const rowLimit = { max: 1_000_000, route: "POST /api/batches" };
const noPause = () => undefined;

/** Every way of cutting `text` into two or three pieces (string positions). */
function* splits(text: string): Generator<string[]> {
  for (let a = 0; a <= text.length; a++) {
    yield [text.slice(0, a), text.slice(a)];
    for (let b = a; b <= text.length; b += 3) yield [text.slice(0, a), text.slice(a, b), text.slice(b)];
  }
}

/** A CSV whose `marker` starts `offset` bytes into the file (after a header and padding rows). */
function csvWithMarkerAt(offset: number, marker: string): string {
  const header = "UserPrincipalName,ProxyAddresses\n";
  const row = (i: number, proxies: string) => `user${i}@contoso.test,${proxies}\n`;
  let text = header;
  let i = 0;
  while (Buffer.byteLength(text) + 200 < offset) text += row(i++, "a".repeat(100));
  const gap = offset - Buffer.byteLength(text) - Buffer.byteLength(`user${i}@contoso.test,`);
  return `${text}${row(i, `${"b".repeat(gap)}${marker}c`)}${row(i + 1, "d")}`;
}

describe("CsvUpload", () => {
  it("decodes a character whose bytes are split across two slices as that character", () => {
    const text = "a,ü,€,😀,z\n".repeat(3);
    for (let slice = 1; slice <= 8; slice++) {
      expect([...CsvUpload.ofText(text).texts(slice)].join("")).toBe(text);
    }
  });

  it("parses a member whose multibyte value straddles the 64 kB slice boundary", async () => {
    for (const shift of [1, 2, 3]) {
      const csv = csvWithMarkerAt(DEFAULT_SLICE_BYTES - shift, "Mü😀ller");
      const members = await parseMembersCsv(CsvUpload.ofText(csv), dataSource, { rowLimit });
      expect(members.map((member) => member.data.ProxyAddresses).flat()).toContainEqual(
        expect.stringMatching(/^b+Mü😀llerc$/),
      );
    }
  });

  it("drops a byte order mark at the start of the file only, not at the start of a later slice", async () => {
    const csv = csvWithMarkerAt(DEFAULT_SLICE_BYTES, "\uFEFF");
    const members = await parseMembersCsv(CsvUpload.ofText(`\uFEFF${csv}`), dataSource, { rowLimit });
    expect(members[0]?.memberKey).toBe("user0@contoso.test"); // the header was recognised
    expect(members.map((member) => member.data.ProxyAddresses).flat()).toContainEqual(
      expect.stringMatching(/^b+\uFEFFc$/),
    );
  });

  it("reports bytes that are not UTF-8 past the first slice at their line and column", async () => {
    const csv = Buffer.concat([
      Buffer.from(csvWithMarkerAt(DEFAULT_SLICE_BYTES + 10, "")),
      Buffer.from("user.x@contoso.test,M\xfcller\n", "latin1"),
    ]);
    const lines = csv.toString("utf8").split("\n").length - 1;
    await expect(parseMembersCsv(new CsvUpload(csv), dataSource, { rowLimit })).rejects.toMatchObject({
      status: 400,
      extensions: {
        problems: [{ line: lines, message: expect.stringMatching(/^column 22 is not valid UTF-8/) }],
      },
    });
  });

  it("decodes a declared charset as body-parser did (windows-1252)", () => {
    const bytes = Buffer.from("UserPrincipalName\nm\xfcller@contoso.test\n", "latin1");
    expect([...new CsvUpload(bytes, "windows-1252").texts()].join("")).toBe(
      "UserPrincipalName\nmüller@contoso.test\n",
    );
  });

  it("tells a blank body (white space, a BOM) from one with text, reading only its start", () => {
    for (const blank of ["", " ", "\uFEFF", "\r\n\t \u00A0\n"]) {
      expect(CsvUpload.ofText(blank).leadingText().trim()).toBe("");
    }
    expect(CsvUpload.ofText(" \n UserPrincipalName\n").leadingText()).toBe("U");
  });
});

describe("flawsByLineOfPieces", () => {
  it("finds the lines, columns and flaws flawsByLine finds in the whole text, however it is cut", async () => {
    const text = "ok\r\nb\0d\r\nfine\n\uFFFDx\rlast\0\n\n";
    const whole = flawsByLine(text);
    expect(whole).toHaveLength(3);
    for (const pieces of splits(text)) {
      expect(await flawsByLineOfPieces(pieces, noPause)).toEqual(whole);
    }
  });
});

describe("uploadFingerprint", () => {
  /** The digest batches have kept so far: the whole text normalized at once. */
  const wholeText = (runbook: string, csv: string) =>
    createHash("sha256")
      .update(runbook)
      .update("\0")
      .update(
        csv
          .replace(/^\uFEFF/, "")
          .replace(/\r\n?/g, "\n")
          .replace(/\n+$/, ""),
      )
      .digest("hex");

  it("is the digest of the whole text normalized at once, however the pieces cut it", async () => {
    for (const csv of ["\uFEFFa,b\r\nc,d\r\n\r\n", "a\rb\r\n\n\nc\n\n", "\n\n", "x,é\r"]) {
      const expected = wholeText("rb", csv);
      for (const pieces of splits(csv)) {
        expect(await uploadFingerprint("rb", pieces, noPause)).toBe(expected);
      }
    }
  });

  it("is the same for the same file saved with other line endings", async () => {
    const unix = await uploadFingerprint("rb", ["a,b\nc,d\n"], noPause);
    expect(await uploadFingerprint("rb", ["a,b\r", "\nc,d\r\n\r\n"], noPause)).toBe(unix);
    expect(await uploadFingerprint("other", ["a,b\nc,d\n"], noPause)).not.toBe(unix);
  });
});
