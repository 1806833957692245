import { useEffect, useMemo, useReducer, useRef, useState } from "preact/hooks";
import { describeError, getGridPage, type GridColumn, type GridMember, type GridStep } from "./batch-api.ts";
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
  stepOf,
} from "./grid-model.ts";
import { useRowVirtualizer } from "./use-row-virtualizer.ts";

const ROW_HEIGHT = 30;
const PHASE_ROW_HEIGHT = 30;
/** The step header row's height: enough for the longest step name, written vertically. */
const STEP_ROW = { min: 120, max: 360 } as const;
/** A column's least width; a phase whose name needs more widens its columns. */
const CELL_WIDTH = 40;
const MEMBER_WIDTH = 270;
/** Padding, border and a little slack around a header's text (see .phase-head and .step-head). */
const PHASE_HEAD_EXTRA = 20;
const STEP_HEAD_EXTRA = 16;
const TIP_ID = "grid-cell-details";

/**
 * How wide a text is drawn in the font of an element with `class` (measured on a canvas; an
 * estimate when there is none), so headers are sized to show their whole names.
 */
function textWidth(className: string): (text: string) => number {
  const probe = document.createElement("div");
  probe.className = className;
  probe.style.visibility = "hidden";
  probe.style.position = "absolute";
  document.body.append(probe);
  const style = getComputedStyle(probe);
  const font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const fontSize = parseFloat(style.fontSize) || 15;
  probe.remove();
  const context = document.createElement("canvas").getContext("2d");
  if (context === null) return (text) => text.length * fontSize * 0.65;
  context.font = font;
  return (text) => context.measureText(text).width;
}

interface Position {
  readonly row: number;
  readonly col: number;
}

/** Which members the grid shows: all of them, or those in one member status. */
export const memberFilters = ["all", "failed", "active", "removed"] as const;
export type MemberFilter = (typeof memberFilters)[number];

/**
 * The member × step grid: one row per member (id order), one column per step of the runbook
 * version (phases in order). Only the rows in view (plus a few) are in the DOM, and only their
 * pages are read from the API; `refreshKey` changes (each poll of a live batch) re-read the pages
 * in view. Keyboard: one cell is tabbable (roving tabindex); arrows, Page Up/Down, Home/End (with
 * Ctrl: first/last cell) move; the focused or hovered cell's details show in a popover that the
 * cell names with aria-describedby. _Show_ narrows the rows to one member status (the API's
 * `memberStatus`); each choice gets a fresh grid body.
 */
export function MemberGrid(props: { readonly batchId: number; readonly refreshKey: number }) {
  const [filter, setFilter] = useState<MemberFilter>("all");
  return (
    <section class="batch-section" aria-labelledby="grid-title">
      <div class="grid-title-row">
        <h2 id="grid-title">Members × steps</h2>
        <label class="grid-filter">
          Show{" "}
          <select
            data-testid="grid-filter"
            value={filter}
            onChange={(event) => setFilter((event.target as HTMLSelectElement).value as MemberFilter)}
          >
            {memberFilters.map((value) => (
              <option key={value} value={value}>
                {value === "all" ? "all members" : `${value} members`}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Legend />
      {/* A new filter is a new set of rows: a fresh grid (pages, focus, scroll) rather than a patched one. */}
      <GridBody
        key={filter}
        batchId={props.batchId}
        refreshKey={props.refreshKey}
        memberStatus={filter === "all" ? undefined : filter}
      />
    </section>
  );
}

function GridBody(props: {
  readonly batchId: number;
  readonly refreshKey: number;
  readonly memberStatus: Exclude<MemberFilter, "all"> | undefined;
}) {
  const pages = useRef(new GridPages()).current;
  const inFlight = useRef(new Set<number>()).current;
  const [version, bump] = useReducer((n: number) => n + 1, 0);
  const [error, setError] = useState<string | undefined>(undefined);
  const scrollRef = useRef<HTMLDivElement>(null);
  const wrapRef = useRef<HTMLDivElement>(null);
  const [active, setActive] = useState<Position>({ row: 0, col: 1 });
  const [tip, setTip] = useState<(Position & { left: number; top: number }) | undefined>(undefined);
  const wantFocus = useRef(false);

  const columns = pages.columns;
  const colCount = columns.length + 1;
  // Headers sized to their names (issue 26): a phase's columns widen until its name fits, and the
  // step row is as tall as the longest step name; the grid scrolls sideways past the member column.
  const { widths, stepRowHeight } = useMemo(() => {
    const phaseText = textWidth("phase-head");
    const stepText = textWidth("step-head");
    return {
      widths: columnWidths(columns, (name) => phaseText(name) + PHASE_HEAD_EXTRA, CELL_WIDTH),
      stepRowHeight: stepHeaderHeight(columns, (name) => stepText(name) + STEP_HEAD_EXTRA, STEP_ROW),
    };
  }, [columns]);
  const headHeight = PHASE_ROW_HEIGHT + stepRowHeight;
  const virtualizer = useRowVirtualizer({
    count: pages.memberTotal,
    rowHeight: ROW_HEIGHT,
    overscan: 8,
    scrollMargin: headHeight,
    getScrollElement: () => scrollRef.current,
  });
  const items = virtualizer.getVirtualItems();
  const first = items[0]?.index ?? 0;
  const last = items.at(-1)?.index ?? -1;

  const load = async (pageIndex: number) => {
    if (inFlight.has(pageIndex)) return;
    inFlight.add(pageIndex);
    try {
      pages.store(
        await getGridPage(props.batchId, pageIndex * GRID_PAGE_SIZE, GRID_PAGE_SIZE, props.memberStatus),
      );
      setError(undefined);
      bump(0);
    } catch (caught) {
      setError(describeError(caught));
    } finally {
      inFlight.delete(pageIndex);
    }
  };

  // Pages scrolled into view that were never read; the first page tells the total and columns.
  useEffect(() => {
    const wanted = pages.loaded ? pagesOf(first, last) : [0];
    for (const page of wanted) if (!pages.has(page)) void load(page);
  }, [first, last, version]);

  // A poll of the live batch: read the pages in view again.
  useEffect(() => {
    if (props.refreshKey === 0) return;
    for (const page of pages.loaded ? pagesOf(first, last) : [0]) void load(page);
  }, [props.refreshKey]);

  // Keyboard moves focus to a cell that may only now be rendered (after scrollToIndex). The
  // details follow the move here too, not only through the cell's focus event: a window without
  // focus (a background tab, a headless page) may deliver that event late or never.
  useEffect(() => {
    if (!wantFocus.current) return;
    const cell = scrollRef.current?.querySelector<HTMLElement>(
      `[data-row="${active.row}"][data-col="${active.col}"]`,
    );
    if (cell === null || cell === undefined) return;
    wantFocus.current = false;
    cell.focus({ preventScroll: false });
    showTip(active, cell);
  });

  const showTip = (position: Position, target: HTMLElement) => {
    const wrap = wrapRef.current?.getBoundingClientRect();
    const rect = target.getBoundingClientRect();
    if (wrap === undefined) return;
    setTip({ ...position, left: rect.left - wrap.left + rect.width + 4, top: rect.top - wrap.top });
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === "Escape") {
      setTip(undefined);
      return;
    }
    const rows = pages.memberTotal;
    if (rows === 0) return;
    const pageRows = Math.max(
      1,
      Math.floor(((scrollRef.current?.clientHeight ?? 300) - headHeight) / ROW_HEIGHT),
    );
    const next = moveFocus(
      event.key,
      event.ctrlKey || event.metaKey,
      active,
      { rows, cols: colCount },
      pageRows,
    );
    if (next === undefined) return;
    event.preventDefault();
    setActive(next);
    wantFocus.current = true;
    virtualizer.scrollToIndex(next.row, { align: "auto" });
  };

  const activeRendered = active.row >= first && active.row <= last;
  const total = pages.memberTotal;
  const width = MEMBER_WIDTH + widths.reduce((sum, w) => sum + w, 0);
  const tipMember = tip === undefined ? undefined : pages.memberAt(tip.row);

  return (
    <>
      {error !== undefined && (
        <p class="error-text" role="alert">
          Could not read the grid: {error}
        </p>
      )}
      {pages.loaded && total === 0 && (
        <p>
          {props.memberStatus === undefined
            ? "This batch has no members."
            : `No ${props.memberStatus} members.`}
        </p>
      )}
      <div class="grid-wrap" ref={wrapRef}>
        <div
          class="grid-scroll"
          ref={scrollRef}
          role="grid"
          aria-labelledby="grid-title"
          aria-rowcount={total + 2}
          aria-colcount={colCount}
          data-testid="member-grid"
          data-member-total={total}
          tabIndex={activeRendered ? -1 : 0}
          // A small batch gets a short grid; a large one scrolls inside at most 60% of the screen.
          style={{ height: `min(60vh, ${headHeight + Math.max(total, 3) * ROW_HEIGHT + 20}px)` }}
          onKeyDown={onKeyDown}
          onScroll={() =>
            setTip((current) =>
              current !== undefined && isFocusInside(scrollRef.current) ? current : undefined,
            )
          }
          onFocus={(event) => {
            if (event.target !== scrollRef.current || total === 0) return;
            // The tabbable cell is scrolled away: bring it back and focus it.
            wantFocus.current = true;
            virtualizer.scrollToIndex(active.row, { align: "auto" });
            bump(0);
          }}
        >
          <div class="grid-head" role="rowgroup" style={{ width: `${width}px`, height: `${headHeight}px` }}>
            <div
              class="grid-row grid-phase-row"
              role="row"
              aria-rowindex={1}
              style={{ height: `${PHASE_ROW_HEIGHT}px` }}
            >
              <div class="row-head" role="columnheader">
                Phase
              </div>
              {phaseGroups(columns).map((group, index, groups) => {
                const start = groups.slice(0, index).reduce((sum, g) => sum + g.span, 0);
                const span = widths.slice(start, start + group.span).reduce((sum, w) => sum + w, 0);
                return (
                  <div
                    key={group.phaseName}
                    class="phase-head"
                    role="columnheader"
                    aria-colspan={group.span}
                    title={`Phase ${group.phaseName}`}
                    style={{ width: `${span}px` }}
                  >
                    {group.phaseName}
                  </div>
                );
              })}
            </div>
            <div class="grid-row grid-step-row" role="row" aria-rowindex={2}>
              <div class="row-head" role="columnheader">
                Member
              </div>
              {columns.map((column, i) => (
                <div
                  key={`${column.phaseName}/${column.stepName}`}
                  class="step-head"
                  role="columnheader"
                  title={`${column.phaseName} / ${column.stepName}`}
                  style={{ width: `${widths[i]}px`, flexBasis: `${widths[i]}px` }}
                >
                  <span style={{ maxHeight: `${stepRowHeight - STEP_HEAD_EXTRA / 2}px` }}>
                    {column.stepName}
                  </span>
                </div>
              ))}
            </div>
          </div>
          <div
            class="grid-body"
            role="rowgroup"
            style={{ height: `${virtualizer.getTotalSize() - headHeight}px`, width: `${width}px` }}
          >
            {items.map((item) => (
              <GridRow
                key={item.index}
                index={item.index}
                top={item.start - headHeight}
                member={pages.memberAt(item.index)}
                columns={columns}
                widths={widths}
                active={active}
                tipShown={tip !== undefined}
                onCell={(position, target, focus) => {
                  if (focus) setActive(position);
                  showTip(position, target);
                }}
                onLeave={() => setTip((current) => (isFocusInside(scrollRef.current) ? current : undefined))}
              />
            ))}
          </div>
        </div>
        {tip !== undefined && (
          <CellDetails
            member={tipMember}
            column={tip.col === 0 ? undefined : columns[tip.col - 1]}
            left={tip.left}
            top={tip.top}
          />
        )}
      </div>
      <p class="muted" id="grid-help">
        {total} {props.memberStatus === undefined ? "" : `${props.memberStatus} `}members. Arrow keys, Page
        Up/Down and Home/End move between cells; the focused cell&apos;s details appear beside it; Escape
        hides them.
      </p>
    </>
  );
}

function isFocusInside(element: HTMLElement | null): boolean {
  return element !== null && element.contains(document.activeElement) && document.activeElement !== element;
}

function GridRow(props: {
  readonly index: number;
  readonly top: number;
  readonly member: GridMember | undefined;
  readonly columns: readonly GridColumn[];
  readonly widths: readonly number[];
  readonly active: Position;
  readonly tipShown: boolean;
  readonly onCell: (position: Position, target: HTMLElement, focus: boolean) => void;
  readonly onLeave: () => void;
}) {
  const { index, member } = props;
  const isActive = (col: number) => props.active.row === index && props.active.col === col;
  const cellProps = (col: number, label: string) => ({
    "data-row": index,
    "data-col": col,
    tabIndex: isActive(col) ? 0 : -1,
    "aria-label": label,
    "aria-describedby": isActive(col) && props.tipShown ? TIP_ID : "grid-help",
    onFocus: (event: FocusEvent) =>
      props.onCell({ row: index, col }, event.currentTarget as HTMLElement, true),
    onMouseEnter: (event: MouseEvent) =>
      props.onCell({ row: index, col }, event.currentTarget as HTMLElement, false),
    onMouseLeave: props.onLeave,
  });
  return (
    <div
      class="grid-row"
      role="row"
      aria-rowindex={index + 3}
      data-testid="grid-row"
      data-member-key={member?.memberKey}
      style={{ transform: `translateY(${props.top}px)`, height: `${ROW_HEIGHT}px` }}
    >
      <div
        class={`row-head member-${member?.status ?? "loading"}`}
        role="rowheader"
        {...cellProps(0, member === undefined ? "loading" : `${member.memberKey}, member ${member.status}`)}
      >
        {member === undefined ? (
          <span class="muted">…</span>
        ) : (
          <>
            <span class="member-key" title={member.memberKey}>
              {member.memberKey}
            </span>
            {member.status !== "active" && <span class="member-flag">{member.status}</span>}
          </>
        )}
      </div>
      {props.columns.map((column, i) => {
        const step = stepOf(member, column);
        const look = cellLook(step?.status);
        const label = `${member?.memberKey ?? "member"}, ${column.phaseName} ${column.stepName}: ${look.label}${
          step?.errorCode ? `, ${step.errorCode}` : ""
        }`;
        return (
          <div
            key={`${column.phaseName}/${column.stepName}`}
            class={`cell ${look.className}`}
            role="gridcell"
            data-status={step?.status ?? "none"}
            style={{ width: `${props.widths[i]}px`, flexBasis: `${props.widths[i]}px` }}
            {...cellProps(i + 1, label)}
          >
            <span aria-hidden="true">{look.letter}</span>
          </div>
        );
      })}
    </div>
  );
}

function CellDetails(props: {
  readonly member: GridMember | undefined;
  readonly column: GridColumn | undefined;
  readonly left: number;
  readonly top: number;
}) {
  const { member, column } = props;
  const step: GridStep | undefined = column === undefined ? undefined : stepOf(member, column);
  return (
    <div
      id={TIP_ID}
      class="grid-tip"
      role="tooltip"
      data-testid="cell-details"
      style={{ left: `${props.left}px`, top: `${props.top}px` }}
    >
      <p class="tip-title">{member?.memberKey ?? "Loading…"}</p>
      {column === undefined ? (
        <dl>
          <dt>Member status</dt>
          <dd>{member?.status ?? "—"}</dd>
          {member?.failedAt && (
            <>
              <dt>Failed at</dt>
              <dd>{new Date(member.failedAt).toLocaleString()}</dd>
            </>
          )}
        </dl>
      ) : (
        <dl>
          <dt>Step</dt>
          <dd>
            {column.phaseName} / {column.stepName}
          </dd>
          <dt>Status</dt>
          <dd>
            {cellLook(step?.status).letter} {cellLook(step?.status).label}
          </dd>
          {step?.errorCode && (
            <>
              <dt>Reason code</dt>
              <dd>
                <code>{step.errorCode}</code>
              </dd>
            </>
          )}
          {step?.errorMessage && (
            <>
              <dt>Error</dt>
              <dd data-testid="cell-error">{step.errorMessage}</dd>
            </>
          )}
          {step?.itemCount != null && (
            <>
              <dt>Values</dt>
              <dd data-testid="cell-values">
                {step.itemsDone ?? 0}/{step.itemCount} done
              </dd>
            </>
          )}
          {step !== undefined && (
            <>
              <dt>Retries</dt>
              <dd>{step.retryCount}</dd>
              <dt>Polls</dt>
              <dd>{step.pollCount}</dd>
              {step.redriveCount > 0 && (
                <>
                  <dt>Redrives</dt>
                  <dd>{step.redriveCount}</dd>
                </>
              )}
              {step.completedAt && (
                <>
                  <dt>Finished</dt>
                  <dd>{new Date(step.completedAt).toLocaleString()}</dd>
                </>
              )}
            </>
          )}
        </dl>
      )}
    </div>
  );
}

function Legend() {
  return (
    <ul class="grid-legend" aria-label="Cell legend">
      {legendStatuses.map((status) => {
        const look = cellLook(status);
        return (
          <li key={look.label}>
            <span class={`cell legend-cell ${look.className}`} aria-hidden="true">
              {look.letter}
            </span>
            {look.label}
          </li>
        );
      })}
    </ul>
  );
}
