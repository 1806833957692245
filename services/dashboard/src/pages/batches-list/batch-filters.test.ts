import { describe, expect, it } from "vitest";
import { filtersOf, hasFilter, listParams, localMidnight } from "./batch-filters.ts";

describe("batches page filters (issue 31)", () => {
  it("reads the URL's filters, trimming text and ignoring a malformed day", () => {
    const filters = filtersOf(
      new URLSearchParams(
        "createdBy=%20ada%40contoso.test%20&createdFrom=2030-01-31&createdTo=31.01.2030&externalRef=CHG-1",
      ),
    );
    expect(filters).toEqual({
      status: "",
      runbook: "",
      createdBy: "ada@contoso.test",
      createdFrom: "2030-01-31",
      createdTo: "",
      externalRef: "CHG-1",
    });
    expect(hasFilter(filters)).toBe(true);
    expect(hasFilter(filtersOf(new URLSearchParams("page=2")))).toBe(false);
  });

  it("sends days as local midnights: from inclusive, to including the whole day", () => {
    const params = listParams(
      {
        status: "active",
        runbook: "",
        createdBy: "",
        createdFrom: "2030-01-30",
        createdTo: "2030-01-31",
        externalRef: "",
      },
      { limit: 26, offset: 25 },
    );
    expect(Object.fromEntries(params)).toEqual({
      limit: "26",
      offset: "25",
      status: "active",
      createdAfter: new Date(2030, 0, 30).toISOString(),
      createdBefore: new Date(2030, 1, 1).toISOString(),
    });
    expect(localMidnight("2030-12-31", 1)).toBe(new Date(2031, 0, 1).toISOString());
  });
});
