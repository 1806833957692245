import { describe, expect, it } from "vitest";
import { parseCondition } from "./parse.ts";
import type { Condition } from "./syntax.ts";
import { MAX_CONDITION_DEPTH, MAX_CONDITION_LENGTH, MAX_LIST_ITEMS } from "./syntax.ts";

function parsed(text: string): Condition {
  const result = parseCondition(text);
  if (!result.ok) throw new Error(`expected ${text} to parse: ${result.problem.message}`);
  return result.condition;
}

function problemOf(text: string): { offset: number; message: string } {
  const result = parseCondition(text);
  if (result.ok) throw new Error(`expected ${text} to be refused`);
  return result.problem;
}

const ref = (name: string, at: number) => ({ kind: "reference", name, at });
const text = (value: string, at: number) => ({ kind: "literal", type: "text", value, at });

describe("parseCondition: accepted", () => {
  it("reads a comparison of a reference with text, names trimmed as templates trim them", () => {
    expect(parsed("{{ HasMailbox }} == 'true'")).toEqual({
      kind: "compare",
      operator: "==",
      left: ref("HasMailbox", 0),
      right: text("true", 20),
    });
  });

  it("reads every operator, numbers (negative, decimal) and booleans", () => {
    for (const operator of ["==", "!=", "<", "<=", ">", ">="]) {
      expect(parsed(`{{Quota}} ${operator} -1.5`)).toMatchObject({
        kind: "compare",
        operator,
        right: { type: "number", value: -1.5 },
      });
    }
    expect(parsed("{{Enabled}} != FALSE")).toMatchObject({ right: { type: "boolean", value: false } });
    expect(parsed("10 < {{Quota}}")).toMatchObject({ left: { value: 10 }, right: ref("Quota", 5) });
  });

  it("binds not tighter than and, and tighter than or; parentheses regroup", () => {
    expect(parsed("not {{A}} is empty and {{B}} == 'x' or {{C}} == 'y'")).toMatchObject({
      kind: "or",
      left: { kind: "and", left: { kind: "not", operand: { kind: "empty" } }, right: { kind: "compare" } },
      right: { kind: "compare" },
    });
    expect(parsed("{{A}} == 'a' and ({{B}} == 'b' or {{C}} == 'c')")).toMatchObject({
      kind: "and",
      right: { kind: "or" },
    });
  });

  it("reads in and not in lists (a trailing comma allowed), and both empty checks", () => {
    expect(parsed("{{Kind}} in ['user', 'shared',]")).toMatchObject({
      kind: "in",
      negated: false,
      list: [text("user", 13), text("shared", 21)],
    });
    expect(parsed("{{Kind}} not in [1, 2]")).toMatchObject({ kind: "in", negated: true });
    expect(parsed("{{TargetUserId}} is empty")).toEqual({
      kind: "empty",
      operand: ref("TargetUserId", 0),
      negated: false,
    });
    expect(parsed("{{TargetUserId}} IS NOT EMPTY")).toMatchObject({ kind: "empty", negated: true });
    expect(parsed("{{TargetUserId}} == ''")).toMatchObject({ right: text("", 20) });
  });

  it("reads a quote doubled inside text, and true/false alone as constants", () => {
    expect(parsed("{{Name}} == 'O''Brien'")).toMatchObject({ right: { value: "O'Brien" } });
    expect(parsed("false")).toEqual({ kind: "constant", value: false });
    expect(parsed("not (true)")).toEqual({ kind: "not", operand: { kind: "constant", value: true } });
  });

  it("lists every reference in order of appearance", () => {
    const result = parseCondition("{{A}} == {{B}} or {{A}} is empty");
    expect(result.ok && result.references.map((r) => [r.name, r.at])).toEqual([
      ["A", 0],
      ["B", 9],
      ["A", 18],
    ]);
  });
});

describe("parseCondition: refused, at the offset of the problem", () => {
  it.each([
    ["{{A}} = 'x'", 6, "unexpected '=': compare with =="],
    ["{{A}} == 'x' && {{B}} == 'y'", 13, "unexpected '&&': write and"],
    ['{{A}} == "x"', 9, "unexpected '\"': text is written in single quotes: 'like this'"],
    ["{{A}} == 'x", 9, "text opened with ' is not closed"],
    ["{{A == 'x'", 0, "'{{' is not closed by '}}'"],
    ["{{}} == 'x'", 0, "empty reference {{}}: name a column or an output"],
    [
      "HasMailbox == 'true'",
      0,
      "unknown word 'HasMailbox': a column or an output is written {{HasMailbox}}, a text 'HasMailbox'",
    ],
    ["{{A}} > 1.", 8, "'1.' is not a number"],
    ["{{A}}", 0, "{{A}} alone is not a condition: compare it (== 'true') or test it (is empty)"],
    [
      "{{A}} == 'x' {{B}} == 'y'",
      13,
      "unexpected {{B}} after a complete condition: join conditions with and / or",
    ],
    ["({{A}} == 'x'", 13, "expected ')' to close '(', found the end of the condition"],
    ["{{A}} ==", 8, "expected a value after ==, found the end of the condition"],
    ["{{A}} is", 8, "expected 'empty' after 'is', found the end of the condition"],
    ["{{A}} in 'x'", 9, "expected '[' to start the list after in, found 'x'"],
    ["{{A}} in []", 9, "an empty list never matches"],
    ["{{A}} in ['x' 'y']", 14, "expected ',' or ']' in the list, found 'y'"],
    ["{{A}} in ['x', {{B}}]", 15, "a list holds fixed values only ('text', numbers, true, false)"],
    ["{{A}} in ['x', 2]", 15, "a list holds values of one type: 2 is a number, 'x' text"],
    ["'x' == 'y'", 4, "'x' == 'y' compares two fixed values: one side must be a {{reference}}"],
    ["{{A}} < true", 8, "true cannot be ordered with <: use == or !="],
    ["'x' is empty", 4, "'x' is a fixed value: test a {{reference}} for emptiness"],
    ["3 in [1, 2]", 2, "3 is a fixed value: test a {{reference}} with in"],
    ["and {{A}} is empty", 0, "expected a condition: {{Name}}, a value, not, or (, found 'and'"],
    [
      "{{A}} == 'x' or",
      15,
      "expected a condition: {{Name}}, a value, not, or (, found the end of the condition",
    ],
  ])("%s → %i: %s", (condition, offset, message) => {
    expect(problemOf(condition)).toEqual({ offset, message });
  });

  it("bounds the length, the nesting depth and the list size", () => {
    const long = `{{A}} == '${"x".repeat(MAX_CONDITION_LENGTH)}'`;
    expect(problemOf(long)).toEqual({
      offset: MAX_CONDITION_LENGTH,
      message: `a condition is at most ${MAX_CONDITION_LENGTH} characters (this one has ${long.length})`,
    });
    const deep = `${"(".repeat(MAX_CONDITION_DEPTH + 1)}{{A}} is empty${")".repeat(MAX_CONDITION_DEPTH + 1)}`;
    expect(problemOf(deep)).toEqual({
      offset: MAX_CONDITION_DEPTH,
      message: `nested deeper than ${MAX_CONDITION_DEPTH} levels`,
    });
    expect(parseCondition(deep.slice(1, -1)).ok).toBe(true);
    const nots = `${"not ".repeat(MAX_CONDITION_DEPTH + 1)}true`;
    expect(problemOf(nots).offset).toBe(4 * MAX_CONDITION_DEPTH);
    const items = Array.from({ length: MAX_LIST_ITEMS + 1 }, (_, i) => String(i));
    const list = `{{A}} in [${items.join(",")}]`;
    expect(problemOf(list)).toEqual({
      offset: list.lastIndexOf(String(MAX_LIST_ITEMS)),
      message: `a list holds at most ${MAX_LIST_ITEMS} values`,
    });
  });

  it("never evaluates what it reads: a name is looked up, not run", () => {
    const result = parseCondition("{{constructor}} == 'x' and {{1+1}} is empty");
    expect(result.ok && result.references.map((r) => r.name)).toEqual(["constructor", "1+1"]);
  });
});
