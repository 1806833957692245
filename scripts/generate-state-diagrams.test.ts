import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { allMachines, defineMachine } from "@matoolkit/domain";
import {
  architecturePath,
  beginMarker,
  endMarker,
  renderStateDiagramsSection,
  replaceBetweenMarkers,
  syncStateDiagrams,
} from "./state-diagrams.ts";

const door = defineMachine({
  entity: "door",
  initial: "closed",
  states: ["closed", "open", "broken"],
  terminal: ["broken"],
  transitions: {
    open: { from: ["closed"], to: "open", description: "push | pull" },
    kick: { from: ["closed", "open"], to: "broken", description: "too hard" },
  },
});

describe("ARCHITECTURE.md", () => {
  it("holds exactly the current rendering of the state machine tables (run `npm run diagrams` if not)", async () => {
    const committed = await readFile(architecturePath, "utf8");
    expect(committed).toBe(replaceBetweenMarkers(committed, renderStateDiagramsSection(allMachines)));
  });
});

describe("renderStateDiagramsSection", () => {
  it("gives each machine a heading, an event table and a mermaid diagram", () => {
    const section = renderStateDiagramsSection([door]);
    expect(section).toContain("### door");
    expect(section).toContain("| `open` | `closed` | `open` | push \\| pull |");
    expect(section).toContain("| `kick` | `closed`, `open` | `broken` | too hard |");
    expect(section).toContain("```mermaid\nstateDiagram-v2\n    [*] --> closed\n");
    expect(section.trimEnd().endsWith("```")).toBe(true);
  });

  it("renders every machine, in order", () => {
    const headings = renderStateDiagramsSection(allMachines).match(/^### .+$/gm);
    expect(headings).toEqual(allMachines.map((machine) => `### ${machine.entity}`));
  });
});

describe("replaceBetweenMarkers", () => {
  const before = "# Architecture\n\nIntro text.\n\n## State machines\n\n";
  const after = "\n\n## Security\n\nUntouched.\n";

  it("replaces only what sits between the markers", () => {
    const document = `${before}${beginMarker}\nold diagrams\n${endMarker}${after}`;
    const replaced = replaceBetweenMarkers(document, "new diagrams");
    expect(replaced).toBe(`${before}${beginMarker}\nnew diagrams\n${endMarker}${after}`);
    expect(replaceBetweenMarkers(replaced, "new diagrams")).toBe(replaced);
  });

  it("refuses a document whose markers are missing, duplicated or reversed", () => {
    expect(() => replaceBetweenMarkers(`${before}${after}`, "x")).toThrow(`missing ${beginMarker}`);
    expect(() => replaceBetweenMarkers(`${beginMarker}${beginMarker}${endMarker}`, "x")).toThrow("duplicate");
    expect(() => replaceBetweenMarkers(`${endMarker}\n${beginMarker}`, "x")).toThrow("comes before");
  });
});

describe("syncStateDiagrams", () => {
  const directory = mkdtemp(join(tmpdir(), "state-diagrams-"));
  afterAll(async () => rm(await directory, { recursive: true, force: true }));

  it("in check mode reports a stale file without touching it, and otherwise rewrites it", async () => {
    const path = join(await directory, "ARCHITECTURE.md");
    const stale = `# Architecture\n\n${beginMarker}\nhand-edited\n${endMarker}\n`;
    await writeFile(path, stale);

    expect(await syncStateDiagrams(path, [door], { check: true })).toBe("stale");
    expect(await readFile(path, "utf8")).toBe(stale);

    expect(await syncStateDiagrams(path, [door], { check: false })).toBe("updated");
    expect(await readFile(path, "utf8")).toContain("### door");
    expect(await syncStateDiagrams(path, [door], { check: true })).toBe("up-to-date");
  });
});
