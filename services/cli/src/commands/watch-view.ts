import { formatCell } from "../output/table.ts";
import { eventSubject } from "./event-subject.ts";
import type { Output } from "../output/output.ts";
import { formatBatchMembers, formatMemberCounts, phaseTotal } from "./batch.views.ts";
import type { BatchDetailView, EventView, MemberCountsView } from "./views.ts";

const BAR_WIDTH = 20;

/**
 * The human view of `batch watch`. On a terminal: the status block (batch line, one line per
 * phase with a progress bar) is redrawn in place below the events printed so far. Piped: plain
 * lines, one per change, so a log shows each step of the batch once.
 */
export class WatchView {
  private drawnLines = 0;
  private readonly printed = new Map<string, string>();

  constructor(private readonly output: Output) {}

  update(batch: BatchDetailView, events: readonly EventView[]): void {
    const lines = events.filter(shownEvent).map((event) => eventLine(event, batch));
    if (this.output.isTTY) {
      // Move to the start of the block drawn last time and clear to the end of the screen.
      if (this.drawnLines > 0) this.output.raw(`\x1b[${this.drawnLines}F\x1b[0J`);
      for (const line of lines) this.output.line(line);
      // Cut to the width: a wrapped line would make the next redraw move up too few lines.
      const width = Math.max(20, (this.output.columns ?? 200) - 1);
      const block = [batchLine(batch), ...batch.phases.map((phase) => `  ${phaseLine(phase, true)}`)].map(
        (line) => (line.length > width ? `${line.slice(0, width - 1)}…` : line),
      );
      for (const line of block) this.output.line(line);
      this.drawnLines = block.length;
      return;
    }
    for (const line of lines) this.output.line(line);
    // The batch last: when it ends, its final state is the log's last line.
    for (const phase of batch.phases) {
      this.printChanged(`phase ${phase.id}`, `phase ${phaseLine(phase, false)}`);
    }
    this.printChanged("batch", batchLine(batch));
  }

  private printChanged(key: string, line: string): void {
    if (this.printed.get(key) === line) return;
    this.printed.set(key, line);
    this.output.line(line);
  }
}

/** Step events are many (members × steps); the phase lines summarise them, `batch events` lists them. */
function shownEvent(event: EventView): boolean {
  return event.entity !== "step";
}

export function eventLine(event: EventView, batch: BatchDetailView): string {
  const reason = event.reason === null ? "" : ` (${formatCell(event.reason)})`;
  return `${event.at}  ${entityLabel(event, batch)}: ${event.fromStatus ?? "new"} -> ${event.toStatus}${reason}`;
}

function entityLabel(event: EventView, batch: BatchDetailView): string {
  if (event.entity === "batch") return `batch ${event.entityId}`;
  if (event.entity === "phase" && (event.phaseName ?? null) === null) {
    // An older server names no phase in its events: the batch's phases do.
    const name = batch.phases.find((phase) => phase.id === event.entityId)?.phaseName;
    return name === undefined ? `phase ${event.entityId}` : `phase ${formatCell(name)}`;
  }
  return eventSubject(event, { withId: false });
}

export function batchLine(batch: BatchDetailView): string {
  const members = formatBatchMembers(batch.memberCounts);
  const gate = batch.phases.find((phase) => phase.status === "awaiting_approval");
  const waiting =
    gate !== undefined
      ? ` - phase ${formatCell(gate.phaseName)} awaits approval: \`matoolkit phase approve ${batch.id} ${gate.sequence}\` (or reject)`
      : waitsForAdvance(batch)
        ? ` - waiting for \`matoolkit batch advance ${batch.id}\``
        : "";
  return `batch ${batch.id} (${formatCell(batch.runbookName)} v${batch.runbookVersion}): ${batch.status}; members ${members}${waiting}`;
}

/** A manual batch moves only when advanced: say so rather than look stuck. */
function waitsForAdvance(batch: BatchDetailView): boolean {
  if (!batch.isManual) return false;
  if (batch.status === "detected") return true;
  return (
    batch.status === "active" &&
    !batch.phases.some((phase) => phase.status === "dispatched") &&
    batch.phases.some((phase) => phase.status === "pending")
  );
}

export function phaseLine(
  phase: { readonly phaseName: string; readonly status: string; readonly memberCounts: MemberCountsView },
  withBar: boolean,
): string {
  const counts = formatMemberCounts(phase.memberCounts);
  const separator = withBar ? ` ${progressBar(phase.memberCounts)} ` : ", ";
  return `${formatCell(phase.phaseName)}: ${phase.status}${separator}${counts}`;
}

/** Finished members (succeeded, skipped, failed or cancelled) out of those dispatched: `[#####-----]`. */
export function progressBar(counts: MemberCountsView): string {
  const total = phaseTotal(counts);
  const done = counts.succeeded + counts.skipped + counts.failed + counts.cancelled;
  const filled = total === 0 ? 0 : Math.round((done / total) * BAR_WIDTH);
  return `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}]`;
}
