import { describe, expect, it } from "vitest";
import type { GridPage } from "./batch-api.ts";
import {
  GRID_PAGE_SIZE,
  GridPages,
  cellLook,
  columnWidths,
  legendStatuses,
  moveFocus,
  pagesOf,
  phaseGroups,
  stepHeaderHeight,
} from "./grid-model.ts";

/** The grid's pure parts: paging, column groups, cell looks and keyboard moves. */
describe("grid model", () => {
  it("finds the pages a range of rows falls in and the member at a row index", () => {
    expect(pagesOf(0, 0)).toEqual([0]);
    expect(pagesOf(95, 205)).toEqual([0, 1, 2]);
    expect(pagesOf(10, 5)).toEqual([]);
    const pages = new GridPages();
    const page: GridPage = {
      batchId: 1,
      memberTotal: 250,
      offset: GRID_PAGE_SIZE,
      columns: [],
      members: [{ id: 7, memberKey: "k", status: "active", failedAt: null, steps: [] }],
    };
    pages.store(page);
    expect([pages.loaded, pages.memberTotal, pages.has(1), pages.has(0)]).toEqual([true, 250, true, false]);
    expect(pages.memberAt(GRID_PAGE_SIZE)?.memberKey).toBe("k");
    expect(pages.memberAt(0)).toBeUndefined();
  });

  it("groups columns by phase in runbook order", () => {
    const columns = ["a/1", "a/2", "b/1", "a/3"].map((name) => {
      const [phaseName, stepName] = name.split("/") as [string, string];
      return { phaseName, stepName };
    });
    expect(phaseGroups(columns)).toEqual([
      { phaseName: "a", span: 2 },
      { phaseName: "b", span: 1 },
      { phaseName: "a", span: 1 },
    ]);
  });

  it("gives every status a distinct letter, so colour is never the only signal", () => {
    const letters = legendStatuses.map((status) => cellLook(status).letter);
    // dispatched and polling share the running colour but not their letter.
    expect(new Set(letters).size).toBe(legendStatuses.length);
  });

  it("moves focus with arrows, pages and Home/End, staying inside the grid", () => {
    const size = { rows: 50, cols: 5 };
    const at = { row: 10, col: 2 };
    expect(moveFocus("ArrowDown", false, at, size, 8)).toEqual({ row: 11, col: 2 });
    expect(moveFocus("ArrowLeft", false, { row: 0, col: 0 }, size, 8)).toEqual({ row: 0, col: 0 });
    expect(moveFocus("PageDown", false, { row: 45, col: 1 }, size, 8)).toEqual({ row: 49, col: 1 });
    expect(moveFocus("PageUp", false, at, size, 8)).toEqual({ row: 2, col: 2 });
    expect(moveFocus("End", false, at, size, 8)).toEqual({ row: 10, col: 4 });
    expect(moveFocus("End", true, at, size, 8)).toEqual({ row: 49, col: 4 });
    expect(moveFocus("Home", true, at, size, 8)).toEqual({ row: 0, col: 0 });
    expect(moveFocus("a", false, at, size, 8)).toBeUndefined();
  });

  it("widens a phase's columns until its whole name fits, and sizes the step row to the longest step", () => {
    const columns = [
      { phaseName: "pre-checks", stepName: "validate-source-mailbox" },
      { phaseName: "pre-checks", stepName: "notify-user" },
      { phaseName: "cutover", stepName: "set-primary-email" },
      { phaseName: "a", stepName: "b" },
    ];
    // 10 px a character: pre-checks needs 100 px over 2 columns, cutover 70 px in one, "a" the least.
    const tenPerChar = (text: string) => text.length * 10;
    expect(columnWidths(columns, tenPerChar, 40)).toEqual([50, 50, 70, 40]);
    expect(stepHeaderHeight(columns, tenPerChar, { min: 120, max: 360 })).toBe(230);
    expect(stepHeaderHeight(columns.slice(1, 2), tenPerChar, { min: 120, max: 360 })).toBe(120);
    expect(
      stepHeaderHeight([{ phaseName: "p", stepName: "x".repeat(50) }], tenPerChar, { min: 120, max: 360 }),
    ).toBe(360);
  });
});
