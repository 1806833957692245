import { describe, expect, it } from "vitest";
import { purgeNotice } from "./purge-wording.ts";

const iso = (text: string) => `<${text}>`;

describe("purgeNotice", () => {
  it("says when and how the batch's personal data was purged", () => {
    expect(purgeNotice({ purgedAt: "2026-08-01T03:00:00.000Z", purgeMode: "scrub" }, iso)).toBe(
      "Personal data purged on <2026-08-01T03:00:00.000Z> (retention: member data, params and results emptied; keys and statuses kept).",
    );
    expect(purgeNotice({ purgedAt: "2026-08-01T03:00:00.000Z", purgeMode: "delete" }, iso)).toBe(
      "Personal data purged on <2026-08-01T03:00:00.000Z> (retention: member and step rows deleted).",
    );
  });

  it("says nothing before the purge, or from a server without retention", () => {
    expect(purgeNotice({ purgedAt: null, purgeMode: null }, iso)).toBeNull();
    expect(purgeNotice({}, iso)).toBeNull();
  });
});
