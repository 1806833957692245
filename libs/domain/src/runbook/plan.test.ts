import { describe, expect, it } from "vitest";
import { buildTemplateVariables } from "../templates/variables.ts";
import { isSecretName, MASKED, maskSecretParams } from "./mask-secrets.ts";
import { parseRunbookOrThrow } from "./parse-runbook.ts";
import { createRunbookPlanner } from "./plan.ts";
import { prepareStepExecution } from "./prepare-step.ts";

const runbook = parseRunbookOrThrow(`
name: plan-test
data_source:
  type: csv
  path: members.csv
  primary_key: UserPrincipalName
  batch_time: immediate
init:
  - name: create-group
    worker_id: worker-01
    function: New-Group
    params:
      Name: "batch-{{_batch_id}} at {{_batch_start_time}}"
phases:
  - name: prepare
    offset: T-1d
    steps:
      - name: create-user
        worker_id: worker-01
        function: "New-{{ObjectType}}"
        params:
          Upn: "{{UserPrincipalName}}"
          Groups: "{{Groups}}"
          ClientSecret: "{{UserPrincipalName}}"
          Nested:
            api_key: plain
            List: ["{{Department}}", "{{InitialPassword}}"]
        output_params:
          TargetId: id
  - name: cutover
    offset: T-0
    steps:
      - name: move
        worker_id: worker-02
        function: Move-Mailbox
        params:
          Target: "{{TargetId}}"
          Batch: "{{_batch_id}}"
          Start: "{{_batch_start_time}}"
`);

const member = {
  UserPrincipalName: "adele@contoso.test",
  ObjectType: "EntraUser",
  Groups: ["Sales", "EMEA"],
  InitialPassword: "hunter2",
};

describe("createRunbookPlanner", () => {
  it("resolves each member step from its data, masking secrets and leaving missing names listed", () => {
    const start = new Date("2030-06-10T09:00:00Z");
    const [prepare, cutover] = createRunbookPlanner(runbook).member(member, start);
    expect(prepare).toEqual({
      phase: "prepare",
      dueAt: new Date("2030-06-09T09:00:00Z"),
      when: null,
      steps: [
        {
          step: "create-user",
          workerId: "worker-01",
          functionName: "New-EntraUser",
          params: {
            Upn: "adele@contoso.test",
            Groups: ["Sales", "EMEA"],
            ClientSecret: MASKED,
            // A name that looks secret is masked at any depth, and so is a value templated from a
            // secret-looking variable; Department is not in the data, so it stays a template.
            Nested: { api_key: MASKED, List: ["{{Department}}", MASKED] },
          },
          unresolved: ["Department"],
          resolvedAtRunTime: [],
          when: null,
          whenDecision: "always",
          forEach: null,
        },
      ],
    });
    expect(JSON.stringify(prepare)).not.toContain("hunter2");
    expect(cutover?.dueAt).toEqual(start);
    expect(cutover?.steps[0]).toEqual({
      step: "move",
      workerId: "worker-02",
      functionName: "Move-Mailbox",
      params: { Target: "{{TargetId}}", Batch: "{{_batch_id}}", Start: "2030-06-10T09:00:00.0000000Z" },
      unresolved: [],
      // An earlier step's output and the batch id only exist once the batch runs: not mistakes.
      resolvedAtRunTime: ["TargetId", "_batch_id"],
      when: null,
      whenDecision: "always",
      forEach: null,
    });
  });

  it("leaves a worker output for run time even when the member's data has a column of that name", () => {
    const [, cutover] = createRunbookPlanner(runbook).member({ ...member, TargetId: "from-source" }, null);
    expect(cutover?.steps[0]?.params.Target).toBe("{{TargetId}}");
    expect(cutover?.steps[0]?.resolvedAtRunTime).toContain("TargetId");
  });

  it("gives a manual batch no due times and reports {{_batch_start_time}} as unresolved, as the orchestrator would", () => {
    const phases = createRunbookPlanner(runbook).member(member, null);
    expect(phases.map((phase) => phase.dueAt)).toEqual([null, null]);
    expect(phases[1]?.steps[0]?.unresolved).toEqual(["_batch_start_time"]);
  });

  it("plans init steps once per batch from the special variables", () => {
    const planner = createRunbookPlanner(runbook);
    expect(planner.init(new Date("2030-06-10T09:00:00Z"))).toEqual([
      {
        step: "create-group",
        workerId: "worker-01",
        functionName: "New-Group",
        params: { Name: "batch-{{_batch_id}} at 2030-06-10T09:00:00.0000000Z" },
        unresolved: [],
        resolvedAtRunTime: ["_batch_id"],
        when: null,
        whenDecision: "always",
        forEach: null,
      },
    ]);
    expect(planner.init(null)[0]?.unresolved).toEqual(["_batch_start_time"]);
  });

  it("resolves like the orchestrator's execution preparation where both resolve everything", () => {
    const step = runbook.phases[0]!.steps[0]!;
    const data = { ...member, Department: "Sales" };
    const prepared = prepareStepExecution(
      step,
      0,
      runbook,
      buildTemplateVariables({ memberData: data, batchId: 7, batchStartTime: null }),
    );
    const [planned] = createRunbookPlanner(runbook).member(data, null)[0]!.steps;
    expect(prepared.paramsResolved).toBe(true);
    expect(planned?.functionName).toBe(prepared.functionName);
    expect(planned?.params).toEqual(maskSecretParams(prepared.paramsJson, step.params));
    expect(planned?.unresolved).toEqual([]);
  });
});

describe("createRunbookPlanner: when:", () => {
  const conditional = parseRunbookOrThrow(`
name: plan-when
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time: immediate
  columns: [HasMailbox, Kind, Quota]
phases:
  - name: prepare
    offset: T-1d
    steps:
      - name: find
        worker_id: w
        function: Find-User
        output_params: { TargetUserId: id }
      - name: create
        worker_id: w
        function: New-User
        params: { Upn: "{{Upn}}", Dept: "{{Department}}" }
        when: "{{TargetUserId}} is empty"
      - name: grow
        worker_id: w
        function: Set-Quota
        when: "{{Quota}} > 50"
  - name: mailbox
    offset: T-0
    when: "{{HasMailbox}} == 'true'"
    steps:
      - name: move
        worker_id: w
        function: Move-Mailbox
        params: { Target: "{{Missing}}" }
      - name: shared-only
        worker_id: w
        function: Convert-Mailbox
        when: "{{Kind}} == 'shared'"
`);
  const decisions = (data: Record<string, unknown>) =>
    createRunbookPlanner(conditional)
      .member({ Upn: "a@contoso.test", ...data }, null)
      .map((phase) => [phase.phase, phase.when, phase.steps.map((step) => [step.step, step.whenDecision])]);

  it("shows each condition and decides it from the member's data where it can", () => {
    expect(decisions({ HasMailbox: "true", Kind: "shared", Quota: "90" })).toEqual([
      [
        "prepare",
        null,
        [
          ["find", "always"],
          ["create", "at_run_time"], // reads find's output
          ["grow", "runs"],
        ],
      ],
      [
        "mailbox",
        "{{HasMailbox}} == 'true'",
        [
          ["move", "runs"],
          ["shared-only", "runs"],
        ],
      ],
    ]);
    const [prepare] = createRunbookPlanner(conditional).member({ Upn: "a" }, null);
    expect(prepare!.steps[1]).toMatchObject({
      when: "{{TargetUserId}} is empty",
      unresolved: ["Department"],
    });
  });

  it("skips a step when its phase's condition or its own is false, and says when it cannot be decided", () => {
    expect(decisions({ HasMailbox: "false", Kind: "shared", Quota: "lots" })).toEqual([
      [
        "prepare",
        null,
        [
          ["find", "always"],
          ["create", "at_run_time"],
          ["grow", "invalid"], // Quota is not a number: condition.invalid at run time
        ],
      ],
      [
        "mailbox",
        "{{HasMailbox}} == 'true'",
        [
          ["move", "skipped"],
          ["shared-only", "skipped"],
        ],
      ],
    ]);
    expect(decisions({ HasMailbox: "true", Kind: "user", Quota: 5 })[1]).toEqual([
      "mailbox",
      "{{HasMailbox}} == 'true'",
      [
        ["move", "runs"],
        ["shared-only", "skipped"],
      ],
    ]);
  });
});

describe("prepareStepExecution", () => {
  it("keeps the step's templates unresolved as written when any name is missing", () => {
    const step = runbook.phases[1]!.steps[0]!;
    const prepared = prepareStepExecution(
      step,
      0,
      runbook,
      buildTemplateVariables({ memberData: member, batchId: 7, batchStartTime: null }),
    );
    expect(prepared).toMatchObject({
      functionName: "Move-Mailbox",
      paramsJson: step.params,
      paramsResolved: false,
    });
  });
});

describe("isSecretName", () => {
  it.each([
    "ClientSecret",
    "password",
    "Admin_Pwd",
    "api-key",
    "RefreshToken",
    "Credential",
    "CertificatePfx",
    "connection_string",
    "SasUrl",
    "passphrase",
  ])("masks %s", (name) => expect(isSecretName(name)).toBe(true));

  it.each(["UserPrincipalName", "DisplayName", "Groups", "Mailbox", "TargetId"])("shows %s", (name) =>
    expect(isSecretName(name)).toBe(false),
  );
});
