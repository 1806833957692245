import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createStandardLibrary } from "../functions/standard-library.ts";
import { renderPermissionsTable, standardFunctionNeeds } from "./function-permissions.ts";

const page = new URL("../../../../docs/worker-and-tenant.md", import.meta.url);

describe("the permissions table", () => {
  it("names exactly the functions of the standard library", () => {
    const names = createStandardLibrary().flatMap((module) => Object.keys(module));
    expect(Object.keys(standardFunctionNeeds).sort()).toEqual(names.sort());
  });

  it("is what docs/worker-and-tenant.md shows (regenerate with renderPermissionsTable)", () => {
    const text = readFileSync(page, "utf8");
    const shown = /<!-- permissions-table:start -->\n([\s\S]*?)<!-- permissions-table:end -->/u.exec(
      text,
    )?.[1];
    expect(shown?.trim()).toBe(renderPermissionsTable());
  });
});
