import { describe, expect, it } from "vitest";
import { defineMachine } from "./define-machine.ts";
import { executionMachine, memberMachine } from "./machines.ts";
import { renderMermaid } from "./mermaid.ts";

describe("renderMermaid", () => {
  it("draws the initial state, one labelled edge per (from, event) and the terminal states", () => {
    expect(renderMermaid(memberMachine)).toBe(
      [
        "stateDiagram-v2",
        "    [*] --> active",
        "    active --> removed: remove",
        "    active --> failed: fail",
        "    failed --> active: redrive",
        "    removed --> [*]",
        "    failed --> [*]",
      ].join("\n"),
    );
  });

  it("draws an event with several sources once per source", () => {
    const lines = renderMermaid(executionMachine).split("\n");
    expect(lines.filter((line) => line.endsWith(": cancel"))).toEqual([
      "    pending --> cancelled: cancel",
      "    dispatched --> cancelled: cancel",
      "    polling --> cancelled: cancel",
    ]);
  });

  it("orders edges by the table's state order, not by event declaration order", () => {
    const light = defineMachine({
      entity: "light",
      initial: "off",
      states: ["off", "on"],
      terminal: [],
      transitions: {
        switch_off: { from: ["on"], to: "off", description: "" },
        switch_on: { from: ["off"], to: "on", description: "" },
      },
    });
    expect(renderMermaid(light)).toBe(
      ["stateDiagram-v2", "    [*] --> off", "    off --> on: switch_on", "    on --> off: switch_off"].join(
        "\n",
      ),
    );
  });
});
