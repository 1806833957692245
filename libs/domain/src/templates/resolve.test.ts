import { describe, expect, it } from "vitest";
import { TemplateResolutionError } from "./errors.ts";
import { resolveParams, resolveStep, resolveTemplateString } from "./resolve.ts";
import { templateVariablesIn } from "./syntax.ts";
import { buildTemplateVariables } from "./variables.ts";

const variables = buildTemplateVariables({
  memberData: {
    UserPrincipalName: "adele@contoso.com",
    FirstName: "Adele",
    LastName: "Vance",
    ObjectType: "EntraUser",
    Groups: ["Sales", "EMEA"],
    Quota: 50,
    Manager: null,
    Settings: { Locale: "de-DE" },
  },
  workerData: { TargetId: "00000000-0000-0000-0000-000000000001" },
  batchId: 12,
  batchStartTime: new Date("2025-03-15T10:30:00Z"),
});

function missingOf(action: () => unknown): TemplateResolutionError {
  try {
    action();
  } catch (error) {
    if (error instanceof TemplateResolutionError) return error;
    throw error;
  }
  throw new Error("expected a TemplateResolutionError");
}

describe("resolveTemplateString", () => {
  it("substitutes columns, specials and worker outputs, trimming whitespace inside braces", () => {
    expect(resolveTemplateString("{{FirstName}} {{ LastName }}", variables)).toBe("Adele Vance");
    expect(resolveTemplateString("batch {{_batch_id}} at {{_batch_start_time}}", variables)).toBe(
      "batch 12 at 2025-03-15T10:30:00.0000000Z",
    );
    expect(resolveTemplateString("target={{TargetId}}", variables)).toBe(
      "target=00000000-0000-0000-0000-000000000001",
    );
  });

  it("embeds lists and maps as JSON and null as empty text inside a larger string", () => {
    expect(resolveTemplateString("groups: {{Groups}}", variables)).toBe('groups: ["Sales","EMEA"]');
    expect(resolveTemplateString("s={{Settings}} m={{Manager}}", variables)).toBe('s={"Locale":"de-DE"} m=');
  });

  it("leaves text without templates (and empty braces) untouched", () => {
    expect(resolveTemplateString("plain {{}} text", variables)).toBe("plain {{}} text");
  });
});

describe("resolveParams", () => {
  it("keeps the native type when a value is exactly one template", () => {
    const resolved = resolveParams(
      { Groups: "{{Groups}}", Quota: "{{Quota}}", BatchId: "{{_batch_id}}" },
      variables,
    );
    expect(resolved).toEqual({ Groups: ["Sales", "EMEA"], Quota: 50, BatchId: 12 });
  });

  it("resolves recursively through lists and maps and keeps non-string values", () => {
    const resolved = resolveParams(
      { Mail: { To: ["{{UserPrincipalName}}", "ops@contoso.com"], Count: 2, Force: true, Note: null } },
      variables,
    );
    expect(resolved).toEqual({
      Mail: { To: ["adele@contoso.com", "ops@contoso.com"], Count: 2, Force: true, Note: null },
    });
  });

  it("does not let callers mutate member data through a resolved list", () => {
    const resolved = resolveParams({ Groups: "{{Groups}}" }, variables);
    (resolved.Groups as string[]).push("changed");
    expect(variables.Groups).toEqual(["Sales", "EMEA"]);
  });
});

describe("resolveStep", () => {
  it("resolves the function name as well as the params", () => {
    const step = { function: "New-{{ObjectType}}", params: { Upn: "{{UserPrincipalName}}" } };
    expect(resolveStep(step, variables)).toEqual({
      functionName: "New-EntraUser",
      params: { Upn: "adele@contoso.com" },
    });
  });

  it("reports every missing variable across function and params, sorted and unique", () => {
    const step = {
      function: "Set-{{Kind}}",
      params: { A: "{{Zeta}}", B: ["{{Alpha}}", { C: "x {{Zeta}} {{UserPrincipalName}}" }] },
    };
    const error = missingOf(() => resolveStep(step, variables));
    expect(error.missing).toEqual(["Alpha", "Kind", "Zeta"]);
    expect(error.reason).toBe("template.unresolved");
    expect(error.message).toContain("Alpha, Kind, Zeta");
  });

  it("never puts variable values (member PII) in the error message", () => {
    const step = {
      function: "Set-User",
      params: { Upn: "{{UserPrincipalName}}", Name: "{{FirstName}} {{Missing}}" },
    };
    const error = missingOf(() => resolveStep(step, variables));
    expect(error.missing).toEqual(["Missing"]);
    expect(error.message).not.toContain("adele");
    expect(error.message).not.toContain("Adele");
  });

  it("never evaluates expressions or reaches prototype properties: they are just missing names", () => {
    const error = missingOf(() =>
      resolveParams(
        { A: "{{1+1}}", B: "{{constructor}}", C: "{{ toString }}", D: "{{__proto__}}" },
        variables,
      ),
    );
    expect(error.missing).toEqual(["1+1", "__proto__", "constructor", "toString"]);
  });

  it("does not resolve templates that appear inside a substituted value", () => {
    const tricky = buildTemplateVariables({
      memberData: { Note: "{{_batch_id}}" },
      batchId: 5,
      batchStartTime: null,
    });
    expect(resolveTemplateString("note: {{Note}}", tricky)).toBe("note: {{_batch_id}}");
    expect(resolveParams({ N: "{{Note}}" }, tricky)).toEqual({ N: "{{_batch_id}}" });
  });

  it("reports _batch_start_time as missing for manual batches", () => {
    const manual = buildTemplateVariables({ batchId: 3, batchStartTime: null });
    const error = missingOf(() => resolveTemplateString("{{_batch_start_time}}", manual));
    expect(error.missing).toEqual(["_batch_start_time"]);
  });
});

describe("templateVariablesIn", () => {
  it("lists the variables referenced by a string or a params tree", () => {
    expect(templateVariablesIn("{{B}} and {{ A }} and {{B}}")).toEqual(["A", "B"]);
    expect(templateVariablesIn({ X: ["{{C}}", { Y: "{{_batch_id}}" }], Z: 5 })).toEqual(["C", "_batch_id"]);
  });
});
