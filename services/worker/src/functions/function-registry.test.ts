import { describe, expect, it } from "vitest";
import { createDiagnosticFunctions } from "./diagnostics.ts";
import { createFunctionRegistry } from "./function-registry.ts";

describe("createFunctionRegistry", () => {
  it("finds functions whatever the casing, as PowerShell does", () => {
    const registry = createFunctionRegistry(createDiagnosticFunctions());

    expect(registry.resolve("test-echo")).toBe(registry.resolve("Test-Echo"));
    expect(registry.resolve("Test-Echo")).toBeTypeOf("function");
    expect(registry.resolve("New-EntraUser")).toBeUndefined();
  });

  it("merges modules and lists their names sorted", () => {
    const registry = createFunctionRegistry(
      { "New-EntraUser": async () => ({}) },
      createDiagnosticFunctions(),
    );

    expect(registry.names()).toEqual([
      "New-EntraUser",
      "Test-Echo",
      "Test-Fail",
      "Test-Flaky",
      "Test-Poll",
      "Test-Sleep",
    ]);
  });

  it("refuses two modules declaring the same function", () => {
    expect(() =>
      createFunctionRegistry(createDiagnosticFunctions(), { "TEST-ECHO": async () => null }),
    ).toThrow(/TEST-ECHO/);
  });
});
