import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { MachineDefinition } from "@matoolkit/domain";
import { renderMermaid } from "@matoolkit/domain";

/**
 * `npm run diagrams`: render the state machine tables as Markdown and splice the result into
 * ARCHITECTURE.md between two markers, leaving every other section untouched.
 */
export const architecturePath = fileURLToPath(new URL("../ARCHITECTURE.md", import.meta.url));
export const beginMarker = "<!-- state-diagrams:begin -->";
export const endMarker = "<!-- state-diagrams:end -->";
export const staleMessage = "ARCHITECTURE.md state diagrams are stale: run npm run diagrams";

type AnyMachine = MachineDefinition<string, string>;

export function renderStateDiagramsSection(machines: readonly AnyMachine[]): string {
  const note =
    "<!-- Generated from libs/domain/src/state-machines/machines.ts by `npm run diagrams`; do not edit by hand. -->";
  return [note, ...machines.map(renderMachine)].join("\n\n");
}

function renderMachine(machine: AnyMachine): string {
  const rows = Object.entries(machine.transitions).map(
    ([event, transition]) =>
      `| ${code(event)} | ${transition.from.map(code).join(", ")} | ${code(transition.to)} | ${cell(transition.description)} |`,
  );
  return [
    `### ${machine.entity}`,
    "",
    `Initial state ${code(machine.initial)}; terminal states ${machine.terminal.map(code).join(", ")}.`,
    "",
    "| Event | From | To | Description |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
    "```mermaid",
    renderMermaid(machine),
    "```",
  ].join("\n");
}

function code(text: string): string {
  return `\`${text}\``;
}

/** A `|` would end the table cell early. */
function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

/** Replaces whatever sits between the markers; throws unless each marker occurs exactly once, in order. */
export function replaceBetweenMarkers(document: string, content: string): string {
  const begin = document.indexOf(beginMarker);
  const end = document.indexOf(endMarker);
  const problems = [
    begin === -1 ? `missing ${beginMarker}` : undefined,
    end === -1 ? `missing ${endMarker}` : undefined,
    begin !== -1 && document.indexOf(beginMarker, begin + 1) !== -1 ? `duplicate ${beginMarker}` : undefined,
    end !== -1 && document.indexOf(endMarker, end + 1) !== -1 ? `duplicate ${endMarker}` : undefined,
    begin !== -1 && end !== -1 && end < begin ? `${endMarker} comes before ${beginMarker}` : undefined,
  ].filter((problem) => problem !== undefined);
  if (problems.length > 0) throw new Error(`Cannot place the state diagrams: ${problems.join("; ")}`);
  return `${document.slice(0, begin + beginMarker.length)}\n${content}\n${document.slice(end)}`;
}

export type SyncOutcome = "up-to-date" | "updated" | "stale";

/** Brings the file's diagrams up to date, or with `check` only reports whether they are stale. */
export async function syncStateDiagrams(
  path: string,
  machines: readonly AnyMachine[],
  options: { readonly check: boolean },
): Promise<SyncOutcome> {
  const current = await readFile(path, "utf8");
  const updated = replaceBetweenMarkers(current, renderStateDiagramsSection(machines));
  if (updated === current) return "up-to-date";
  if (options.check) return "stale";
  await writeFile(path, updated);
  return "updated";
}
