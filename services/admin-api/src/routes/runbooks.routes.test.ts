import { routingProperties, topics } from "@matoolkit/domain";
import { workerJobsSubscription, type Delivery } from "@matoolkit/runtime";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness, type Json } from "../../test/api-test-harness.ts";

let harness: ApiHarness;

beforeAll(async () => {
  harness = await startApiHarness();
});

afterAll(async () => {
  await harness?.stop();
});

const publishYaml = (yaml: string, query = "") =>
  harness.request("POST", `/runbooks${query}`, { body: yaml, type: "application/yaml" });

const publishJson = (body: unknown) =>
  harness.request("POST", "/runbooks", { body: JSON.stringify(body), type: "application/json" });

describe("POST /api/runbooks", () => {
  it("publishes raw YAML with options from the query string", async () => {
    const response = await publishYaml(
      testRunbookYaml({ name: "yaml-body" }),
      "?overdueBehavior=ignore&rerunInit=true",
    );
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      name: "yaml-body",
      version: 1,
      isActive: true,
      overdueBehavior: "ignore",
      rerunInit: true,
    });
  });

  it("publishes JSON { yaml, overdueBehavior, rerunInit }", async () => {
    const yaml = testRunbookYaml({ name: "json-body" });
    const response = await publishJson({ yaml, overdueBehavior: "ignore", rerunInit: true });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      name: "json-body",
      version: 1,
      overdueBehavior: "ignore",
      rerunInit: true,
    });
    const stored = await harness.request("GET", "/runbooks/json-body");
    expect(stored.body.yamlContent).toBe(yaml);
  });

  it("makes a second publish version 2 and the only active one", async () => {
    expect((await publishYaml(testRunbookYaml({ name: "twice" }))).status).toBe(201);
    const second = await publishYaml(testRunbookYaml({ name: "twice", phases: ["only"] }));
    expect(second.body).toMatchObject({ version: 2, isActive: true });

    const versions = await harness.request("GET", "/runbooks/twice/versions", {
      token: harness.readerToken,
    });
    expect(versions.status).toBe(200);
    expect(versions.body.map((v: Json) => [v.version, v.isActive])).toEqual([
      [2, true],
      [1, false],
    ]);
    const latest = await harness.request("GET", "/runbooks/twice", { token: harness.readerToken });
    expect(latest.body).toMatchObject({ version: 2 });
    expect(latest.body.yamlContent).toContain("name: only");
    const first = await harness.request("GET", "/runbooks/twice/versions/1", { token: harness.readerToken });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ version: 1, isActive: false });
    expect(first.body.yamlContent).toContain("name: cutover");
  });

  it("rejects a JSON name that differs from the YAML's name, storing nothing", async () => {
    const response = await publishJson({ name: "other", yaml: testRunbookYaml({ name: "mismatch" }) });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("validation.invalid_input");
    expect(response.body.detail).toContain("'other'");
    expect(response.body.detail).toContain("'mismatch'");
    expect((await harness.request("GET", "/runbooks/mismatch/versions")).status).toBe(404);
  });

  it.each([
    ["no body at all", {}],
    ["an empty YAML body", { body: "", type: "application/yaml" }],
    ["JSON without yaml", { body: JSON.stringify({ rerunInit: true }), type: "application/json" }],
  ])("answers %s with 400 saying what to send", async (_what, options) => {
    const response = await harness.request("POST", "/runbooks", options);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("validation.invalid_input");
    expect(response.body.detail).toMatch(/runbook YAML as the body.*application\/yaml/);
    expect(response.body.detail).toContain("JSON { yaml");
  });

  it("refuses a when: with a syntax error or an undeclared column at its line:column, storing nothing", async () => {
    const withWhen = (name: string, when: string) =>
      testRunbookYaml({ name }).replace(
        "        function: Test-Echo\n",
        `        function: Test-Echo\n        when: "${when}"\n`,
      );
    const refused = await publishYaml(
      withWhen("conditional", "{{ProxyAddresses}} is not empty and {{Mailbox}} = 'yes'"),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("runbook.invalid");
    // The step's `when:` is line 17; its text starts at column 16.
    expect(refused.body.problems).toEqual([
      {
        path: "phases[0].steps[0].when",
        line: 17,
        column: 64,
        message: "unexpected '=': compare with ==",
      },
    ]);
    const unknown = await publishYaml(withWhen("conditional", "{{Mailbox}} == 'yes'"));
    expect(unknown.body.problems).toEqual([
      {
        path: "phases[0].steps[0].when",
        line: 17,
        column: 16,
        message:
          "{{Mailbox}} is neither a column the data source declares nor an output of an earlier step " +
          "(list the column in data_source.columns; declared: UserPrincipalName, ProxyAddresses)",
      },
    ]);
    expect(
      await harness.db.selectFrom("runbooks").select("id").where("name", "=", "conditional").execute(),
    ).toEqual([]);
    const published = await publishYaml(withWhen("conditional", "{{ProxyAddresses}} is not empty"));
    expect(published.status).toBe(201);
  });

  it("refuses a for_each: over a single-valued column at its line:column, storing nothing (issue 30)", async () => {
    const withForEach = (name: string, list: string) =>
      testRunbookYaml({ name }).replace(
        "        function: Test-Echo\n",
        `        function: Test-Echo\n        for_each: "${list}"\n`,
      );
    const refused = await publishYaml(withForEach("per-value", "{{UserPrincipalName}}"));
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("runbook.invalid");
    // The step's `for_each:` is line 17; its text starts at column 20, the name at 22.
    expect(refused.body.problems).toEqual([
      {
        path: "phases[0].steps[0].for_each",
        line: 17,
        column: 22,
        message:
          "{{UserPrincipalName}} is a single-valued column; list it in data_source.multi_valued_columns " +
          "to run a step per value",
      },
    ]);
    expect(
      await harness.db.selectFrom("runbooks").select("id").where("name", "=", "per-value").execute(),
    ).toEqual([]);
    expect((await publishYaml(withForEach("per-value", "{{ProxyAddresses}}"))).status).toBe(201);
  });

  it("rejects an unknown overdueBehavior, naming the field", async () => {
    const response = await publishJson({ yaml: testRunbookYaml({ name: "bad-opt" }), overdueBehavior: "x" });
    expect(response.status).toBe(400);
    expect(response.body.problems[0].path).toBe("overdueBehavior");
  });
  it("rejects a misspelt option instead of publishing with the default", async () => {
    const response = await publishJson({
      yaml: testRunbookYaml({ name: "typo" }),
      overdue_behavior: "ignore",
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.problems)).toContain("overdue_behavior");
    expect((await harness.request("GET", "/runbooks/typo")).status).toBe(404);
  });
});

describe("GET /api/runbooks", () => {
  it("lists only the active version of each runbook", async () => {
    await publishYaml(testRunbookYaml({ name: "listed" }));
    await publishYaml(testRunbookYaml({ name: "listed" }));
    const response = await harness.request("GET", "/runbooks", { token: harness.readerToken });
    expect(response.status).toBe(200);
    expect(response.body.every((runbook: Json) => runbook.isActive === true)).toBe(true);
    const listed = response.body.filter((runbook: Json) => runbook.name === "listed");
    expect(listed.map((runbook: Json) => runbook.version)).toEqual([2]);
    // The list is a summary: YAML only on the single-runbook reads.
    expect(listed[0]).not.toHaveProperty("yamlContent");
  });

  it("answers an unknown name with 404 resource.not_found", async () => {
    for (const path of ["/runbooks/nope", "/runbooks/nope/versions", "/runbooks/nope/versions/1"]) {
      const response = await harness.request("GET", path, { token: harness.readerToken });
      expect(response.status, path).toBe(404);
      expect(response.body.code, path).toBe("resource.not_found");
    }
  });

  it("answers a version that does not exist with 404", async () => {
    await publishYaml(testRunbookYaml({ name: "one-version" }));
    const response = await harness.request("GET", "/runbooks/one-version/versions/2");
    expect(response.status).toBe(404);
    expect(response.body.code).toBe("resource.not_found");
  });

  it.each(["abc", "0", "-1", "1.5", "2147483648"])("answers version '%s' with 400", async (version) => {
    await publishYaml(testRunbookYaml({ name: "versioned" }));
    const response = await harness.request("GET", `/runbooks/versioned/versions/${version}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("validation.invalid_input");
    expect(response.body.detail).toContain("'version'");
  });
});

describe("worker pools of a published runbook", () => {
  it("keeps a job sent to a pool before any of its workers started, and delivers it on subscribe", async () => {
    const workerId = "pool-before-start";
    const initWorkerId = "pool-init-before-start";
    const published = await publishYaml(
      testRunbookYaml({ name: "pools", workerId, initWorkerId, phases: ["only"] }),
    );
    expect(published.status).toBe(201);

    const { bus } = harness.runtime;
    const jobs = [workerId, initWorkerId].map((pool) => ({
      id: `job:test-${pool}`,
      topic: topics.workerJobs,
      body: { JobId: `test-${pool}` },
      properties: { [routingProperties.workerId]: pool },
    }));
    for (const job of jobs) await bus.publish(job);

    const received: Delivery[] = [];
    for (const pool of [workerId, initWorkerId]) {
      await bus.subscribe(workerJobsSubscription(pool), async (delivery) => void received.push(delivery));
    }
    await vi.waitFor(() => expect(received).toHaveLength(2), { timeout: 10_000 });
    expect(received.map((delivery) => delivery.id).sort()).toEqual(jobs.map((job) => job.id).sort());
  });
});
