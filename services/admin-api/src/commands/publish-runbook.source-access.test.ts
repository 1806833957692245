import { mkdtemp, mkdir, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { publishRunbook } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";

/**
 * The admin API must not be a way to read the server's files or reach its own database: a
 * runbook's csv source reads only below the CSV directory, and its env vars are source variables.
 */
let harness: ApiHarness;
let outside: string;

beforeAll(async () => {
  harness = await startApiHarness();
  outside = await mkdtemp(path.join(tmpdir(), "matoolkit-outside-"));
  await writeFile(path.join(outside, "secret.csv"), "UserPrincipalName\nserver-secret@contoso.test\n");
  await writeFile(
    path.join(harness.dataDir, "members.csv"),
    "UserPrincipalName,ProxyAddresses\nalex@contoso.test,smtp:alex@contoso.test\n",
  );
});

afterAll(async () => {
  await harness?.stop();
  await rm(outside, { recursive: true, force: true });
});

const withPath = (name: string, csvPath: string) =>
  testRunbookYaml({ name }).replace("path: members.csv", `path: ${csvPath}`);

const publish = (yaml: string) =>
  harness.request("POST", "/runbooks", { body: yaml, type: "application/yaml" });

const preview = (name: string) => harness.request("POST", `/runbooks/${name}/query/preview`);

describe("publishing a csv source", () => {
  it.each([
    ["/etc/passwd", "csv path must be relative to the CSV directory (MATOOLKIT_CSV_DIR), not absolute"],
    ["../../../../etc/passwd", 'csv path must not contain ".." (it must stay inside the CSV directory)'],
  ])("refuses %s at the position of data_source.path", async (csvPath, message) => {
    const response = await publish(withPath("read-files", csvPath));
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("runbook.invalid");
    // testRunbookYaml puts `path:` on line 4, its value at column 9.
    expect(response.body.problems).toEqual([{ path: "data_source.path", line: 4, column: 9, message }]);
    expect(
      await harness.db.selectFrom("runbooks").select("id").where("name", "=", "read-files").execute(),
    ).toEqual([]);
  });

  it("refuses a symlink that leads outside the directory, and accepts a file inside", async () => {
    await symlink(path.join(outside, "secret.csv"), path.join(harness.dataDir, "link.csv"));
    const refused = await publish(withPath("via-link", "link.csv"));
    expect(refused.status).toBe(400);
    expect(refused.body.problems[0]).toMatchObject({ path: "data_source.path", line: 4 });
    expect(refused.text).not.toContain(outside);
    expect((await publish(withPath("inside", "members.csv"))).status).toBe(201);
  });
});

describe("reading a csv source (query preview)", () => {
  it("refuses a runbook stored before the check, without showing the file's rows", async () => {
    await publishRunbook(harness.db, {
      name: "stored-before",
      yamlContent: withPath("stored-before", "/etc/passwd"),
      overdueBehavior: "rerun",
      rerunInit: false,
    });
    const response = await preview("stored-before");
    // The API's answer to any failing source (datasource.failed), with the reason in detail.
    expect(response.status).toBe(502);
    expect(response.body.code).toBe("datasource.failed");
    expect(response.body.detail).toContain("csv path /etc/passwd must be relative to the CSV directory");
    expect(response.text).not.toContain("root:");
  });

  it("refuses a symlink swapped in after publish", async () => {
    await mkdir(path.join(harness.dataDir, "wave"));
    const file = path.join(harness.dataDir, "wave", "members.csv");
    await writeFile(file, "UserPrincipalName,ProxyAddresses\nalex@contoso.test,\n");
    expect((await publish(withPath("swapped", "wave/members.csv"))).status).toBe(201);
    expect((await preview("swapped")).status).toBe(200);
    await unlink(file);
    await symlink(path.join(outside, "secret.csv"), file);
    const response = await preview("swapped");
    expect(response.status).toBe(502);
    expect(response.body.detail).toContain("leads outside the CSV directory");
    expect(response.text).not.toContain("server-secret");
  });
});

describe("env vars a runbook names", () => {
  it.each(["DATABASE_URL", "MATOOLKIT_CLIENT_SECRET", "PATH"])(
    "refuses %s at publish, at its position",
    async (variable) => {
      const yaml =
        `name: own-db\ndata_source:\n  type: postgres\n  connection: ${variable}\n  query: SELECT 1 AS "UserPrincipalName"\n` +
        "  primary_key: UserPrincipalName\n  batch_time: immediate\n" +
        "phases:\n  - name: p\n    offset: T-0\n    steps:\n      - name: s\n        worker_id: worker-01\n        function: Test-Echo\n";
      const response = await publish(yaml);
      expect(response.status).toBe(400);
      expect(response.body.problems).toEqual([
        {
          path: "data_source.connection",
          line: 4,
          column: 15,
          message: `environment variable ${variable} may not be named by a runbook; use a MATOOLKIT_SOURCE_* variable`,
        },
      ]);
    },
  );
});
