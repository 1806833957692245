import { describe, expect, it } from "vitest";
import { formatCell, formatFields, formatTable, type Column } from "./table.ts";

interface Row {
  readonly id: number;
  readonly name: string;
  readonly error: string | null;
}

const columns: Column<Row>[] = [
  { header: "ID", value: (r) => r.id, align: "right" },
  { header: "NAME", value: (r) => r.name },
  { header: "ERROR", value: (r) => r.error, shrink: true },
];

const rows: Row[] = [
  { id: 7, name: "pre-checks", error: null },
  { id: 12, name: "cutover", error: "graph.throttled: too many requests to the tenant, retry later" },
];

describe("formatTable", () => {
  it("pads columns to their widest cell, right-aligns numbers and shows a missing value as '-'", () => {
    expect(formatTable(rows, columns)).toBe(
      [
        "ID  NAME        ERROR",
        " 7  pre-checks  -",
        "12  cutover     graph.throttled: too many requests to the tenant, retry later",
      ].join("\n"),
    );
  });

  it("cuts only the shrinkable columns, with an ellipsis, to fit a terminal's width", () => {
    const fitted = formatTable(rows, columns, { maxWidth: 40 }).split("\n");
    expect(fitted.every((line) => line.length <= 40)).toBe(true);
    expect(fitted[2]).toBe("12  cutover     graph.throttled: too ma…");
    expect(fitted[1]).toBe(" 7  pre-checks  -");
  });

  it("keeps a shrinkable column at least as wide as its header, even if the table stays too wide", () => {
    const fitted = formatTable(rows, columns, { maxWidth: 10 }).split("\n");
    expect(fitted[2]).toBe("12  cutover     graph.t…");
  });

  it("never truncates without a width (piped output keeps every character)", () => {
    expect(formatTable(rows, columns)).toContain("retry later");
  });

  it("keeps every row on one line and strips terminal escape sequences from API text", () => {
    const hostile = formatTable([{ id: 1, name: "a\nb", error: "\x1b[31mred\x1b[0m\tx" }], columns);
    expect(hostile.split("\n")).toHaveLength(2);
    expect(hostile).not.toContain("\x1b");
    expect(hostile).toContain("a b");
    expect(hostile).toContain("\ufffd[31mred\ufffd[0m x");
  });
});

describe("formatCell", () => {
  it("writes dates as ISO 8601, booleans as yes/no and objects as compact JSON", () => {
    expect(formatCell(new Date("2026-12-05T09:00:00Z"))).toBe("2026-12-05T09:00:00.000Z");
    expect(formatCell(true)).toBe("yes");
    expect(formatCell(false)).toBe("no");
    expect(formatCell({ a: [1, 2] })).toBe('{"a":[1,2]}');
    expect(formatCell(undefined)).toBe("-");
    expect(formatCell("")).toBe("-");
    expect(formatCell(0)).toBe("0");
  });
});

describe("formatFields", () => {
  it("aligns the values after the longest label", () => {
    expect(
      formatFields([
        ["Batch", 3],
        ["Current phase", null],
      ]),
    ).toBe("Batch:         3\nCurrent phase: -");
  });
});
