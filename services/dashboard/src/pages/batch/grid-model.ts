import type { ExecutionStatus, GridColumn, GridMember, GridPage, GridStep } from "./batch-api.ts";
import { unreachable } from "./batch-api.ts";

/** Members per GET /api/batches/{id}/grid request: a screen or two of rows. */
export const GRID_PAGE_SIZE = 100;

/**
 * The grid's rows as loaded so far, page by page: a virtualised grid asks only for the pages
 * its visible rows fall in, so a 10,000-member batch costs a few requests of 100 members, not
 * 10,000 rows of steps. Pages are replaced whole when read again (live updates).
 */
export class GridPages {
  private readonly pages = new Map<number, readonly GridMember[]>();
  memberTotal = 0;
  columns: readonly GridColumn[] = [];
  /** Whether any page has been read (the total and columns are known). */
  loaded = false;

  store(page: GridPage): void {
    this.pages.set(Math.floor(page.offset / GRID_PAGE_SIZE), page.members);
    this.memberTotal = page.memberTotal;
    this.columns = page.columns;
    this.loaded = true;
  }

  memberAt(index: number): GridMember | undefined {
    return this.pages.get(Math.floor(index / GRID_PAGE_SIZE))?.[index % GRID_PAGE_SIZE];
  }

  has(pageIndex: number): boolean {
    return this.pages.has(pageIndex);
  }
}

/** The page indexes rows `first`…`last` (inclusive) fall in. */
export function pagesOf(first: number, last: number): number[] {
  if (last < first) return [];
  const pages: number[] = [];
  for (let page = Math.floor(first / GRID_PAGE_SIZE); page <= Math.floor(last / GRID_PAGE_SIZE); page++) {
    pages.push(page);
  }
  return pages;
}

/** A member's step for a column (the grid answers the current run of each step). */
export function stepOf(member: GridMember | undefined, column: GridColumn): GridStep | undefined {
  return member?.steps.find(
    (step) => step.phaseName === column.phaseName && step.stepName === column.stepName,
  );
}

/** The cell's look: a CSS class (colour) and a letter, so the status never rests on colour alone. */
export interface CellLook {
  readonly letter: string;
  readonly label: string;
  readonly className: string;
}

export function cellLook(status: ExecutionStatus | undefined): CellLook {
  if (status === undefined) return { letter: "·", label: "not started", className: "cell-none" };
  switch (status) {
    case "pending":
      return { letter: "W", label: "waiting", className: "cell-pending" };
    case "dispatched":
      return { letter: "R", label: "running", className: "cell-running" };
    case "polling":
      return { letter: "P", label: "polling", className: "cell-running" };
    case "succeeded":
      return { letter: "S", label: "succeeded", className: "cell-succeeded" };
    case "failed":
      return { letter: "F", label: "failed", className: "cell-failed" };
    case "poll_timeout":
      return { letter: "T", label: "poll timed out", className: "cell-failed" };
    case "cancelled":
      return { letter: "C", label: "cancelled", className: "cell-cancelled" };
    case "skipped":
      // Done without running: its when: was false for this member (issue 30).
      return { letter: "K", label: "skipped (when: false)", className: "cell-skipped" };
    default:
      return unreachable(status);
  }
}

/** The legend, in the order an operator reads a run: waiting → running → ended. */
export const legendStatuses: readonly (ExecutionStatus | undefined)[] = [
  undefined,
  "pending",
  "dispatched",
  "polling",
  "succeeded",
  "skipped",
  "failed",
  "poll_timeout",
  "cancelled",
];

/** Columns grouped by phase for the header's first row (runbook order kept). */
export function phaseGroups(columns: readonly GridColumn[]): { phaseName: string; span: number }[] {
  const groups: { phaseName: string; span: number }[] = [];
  for (const column of columns) {
    const last = groups.at(-1);
    if (last?.phaseName === column.phaseName) last.span++;
    else groups.push({ phaseName: column.phaseName, span: 1 });
  }
  return groups;
}

/**
 * Each column's width in px: at least `min`, and wide enough together that the phase header above
 * them shows the whole phase name (`phaseWidth`: the header's width for a name, padding included;
 * what a phase needs beyond `min` per column is shared out over its columns).
 */
export function columnWidths(
  columns: readonly GridColumn[],
  phaseWidth: (phaseName: string) => number,
  min: number,
): number[] {
  return phaseGroups(columns).flatMap((group) => {
    const each = Math.max(min, Math.ceil(phaseWidth(group.phaseName) / group.span));
    return Array.from({ length: group.span }, () => each);
  });
}

/**
 * The height in px of the step header row, whose names are written vertically: the longest name
 * (`stepLength`, padding included) and no less than `min`; beyond `max` a name is cut with an
 * ellipsis and read whole in its title.
 */
export function stepHeaderHeight(
  columns: readonly GridColumn[],
  stepLength: (stepName: string) => number,
  bounds: { readonly min: number; readonly max: number },
): number {
  const longest = Math.max(0, ...columns.map((column) => Math.ceil(stepLength(column.stepName))));
  return Math.min(bounds.max, Math.max(bounds.min, longest));
}

/** Where keyboard focus goes from (row, col) for a key; undefined when the key is not a move. */
export function moveFocus(
  key: string,
  ctrl: boolean,
  at: { row: number; col: number },
  size: { rows: number; cols: number },
  pageRows: number,
): { row: number; col: number } | undefined {
  const clamp = (row: number, col: number) => ({
    row: Math.max(0, Math.min(size.rows - 1, row)),
    col: Math.max(0, Math.min(size.cols - 1, col)),
  });
  switch (key) {
    case "ArrowUp":
      return clamp(at.row - 1, at.col);
    case "ArrowDown":
      return clamp(at.row + 1, at.col);
    case "ArrowLeft":
      return clamp(at.row, at.col - 1);
    case "ArrowRight":
      return clamp(at.row, at.col + 1);
    case "PageUp":
      return clamp(at.row - pageRows, at.col);
    case "PageDown":
      return clamp(at.row + pageRows, at.col);
    case "Home":
      return ctrl ? clamp(0, 0) : clamp(at.row, 0);
    case "End":
      return ctrl ? clamp(size.rows - 1, size.cols - 1) : clamp(at.row, size.cols - 1);
    default:
      return undefined;
  }
}
