import { describe, expect, it } from "vitest";
import { parseRunbookOrThrow } from "./parse-runbook.ts";
import { maskMemberData, memberSecretValues, secretPolicyOf } from "./secret-policy.ts";
import { SecretValues } from "./secret-values.ts";

const runbook = parseRunbookOrThrow(`
name: policy-test
data_source:
  type: csv
  path: members.csv
  primary_key: MemberKey
  batch_time: immediate
  secret_columns: [Badge]
phases:
  - name: p
    offset: T-0
    steps:
      - name: set
        worker_id: w
        function: F
        params:
          Upn: "{{MemberKey}}"
          Password: "{{EmployeeId}}"
          Args: "-code {{Pin}}"
          Options:
            ApiToken: "{{Issued}}"
            Plain: "{{Department}}"
        secret_params: [Args]
`);
const policy = secretPolicyOf([runbook]);

describe("secretPolicyOf", () => {
  it("makes secret: names on the list, marked columns, and every variable a secret param uses", () => {
    const secret = ["InitialPassword", "Badge", "EmployeeId", "Pin", "Issued"];
    expect(secret.filter((name) => policy.isSecretVariable(name))).toEqual(secret);
    expect(["Department", "DisplayName"].filter((name) => policy.isSecretVariable(name))).toEqual([]);
  });

  it("never makes the primary key secret, even when its name looks secret", () => {
    expect(policy.isSecretVariable("MemberKey")).toBe(false);
  });

  it("masks a step's params by name, marker and template, as the plan does", () => {
    const params = {
      Upn: "a@contoso.test",
      Password: "E-100",
      Args: "-code 4242",
      Options: { ApiToken: "tok", Plain: "Sales" },
    };
    expect(policy.maskParams("set", params)).toEqual({
      Upn: "a@contoso.test",
      Password: "***",
      Args: "***",
      Options: { ApiToken: "***", Plain: "Sales" },
    });
    // A step the runbook does not (or no longer) has still gets the name list.
    expect(policy.maskParams("gone", { ClientSecret: "x", Other: "y" })).toEqual({
      ClientSecret: "***",
      Other: "y",
    });
  });
});

describe("a member's secret values", () => {
  const member = {
    dataJson: { MemberKey: "a@contoso.test", Badge: "BDG-991", Pin: 4242, Department: "Sales" },
    workerDataJson: { Issued: "tok-777-abc", TargetId: "guid-1" },
  };
  const values = memberSecretValues(policy, member);

  it("are its secret columns and outputs, numbers as text, never the other columns", () => {
    expect(values.size).toBe(3);
    expect(values.maskText("badge BDG-991, pin 4242, token tok-777-abc, Sales")).toBe(
      "badge ***, pin ***, token ***, Sales",
    );
  });

  it("mask the member's data: secret columns ***, the key and other columns shown", () => {
    expect(maskMemberData(policy, values, member.dataJson)).toEqual({
      MemberKey: "a@contoso.test",
      Badge: "***",
      Pin: "***",
      Department: "Sales",
    });
  });

  it("mask a result at any depth, under any key, in text and in property names", () => {
    const result = {
      note: "set BDG-991",
      list: [4242, { deep: "x tok-777-abc y" }],
      "BDG-991": true,
      refreshToken: "r",
    };
    expect(values.mask(result)).toEqual({
      note: "set ***",
      list: ["***", { deep: "x *** y" }],
      "***": true,
      refreshToken: "***",
    });
  });
});

describe("SecretValues", () => {
  it("masks short values only where they stand alone, and JSON-escaped forms", () => {
    const values = SecretValues.of(["a1", 'p"w\\q9']);
    expect(values.maskText("pin a1 in ba1d")).toBe("pin *** in ba1d");
    expect(values.maskText(JSON.stringify({ pw: 'p"w\\q9' }))).toBe('{"pw":"***"}');
  });

  it("ignores empty text, booleans and null", () => {
    expect(SecretValues.of(["", "  ", true, null]).size).toBe(0);
  });
});
