import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../test/browser-harness.ts";

/**
 * The dashboard in headless Chromium against the whole system (start-all on the test database,
 * simulated tenant): sign-in, publishing with a refused runbook marked at its lines, a batch
 * from a CSV upload, and a Reader who sees no action. Every wait is for a DOM state.
 */
let harness: BrowserHarness;
const example = (name: string) => readFileSync(path.join(harness.examplesDir, name), "utf8");

beforeAll(async () => {
  harness = await startBrowserHarness();
}, 120_000);

// The dashboard works under its Content-Security-Policy: no page reported a violation.
afterEach(async () => {
  expect(await harness?.takeCspViolations(), "Content-Security-Policy violations").toEqual([]);
});

afterAll(async () => {
  await harness?.stop();
});

describe("dashboard (browser)", { timeout: 60_000 }, () => {
  it("signs in from the start banner's #token= link and keeps the token out of the address bar", async () => {
    const { page } = harness;
    await expect(page.getByTestId("user-name").textContent()).resolves.toBe("admin@example.test");
    expect(page.url()).not.toContain("token=");
    expect(page.url()).toMatch(/#\/runbooks$/);
    await expect(page.evaluate(() => sessionStorage.getItem("matoolkit.token"))).resolves.toBe(
      harness.tokens.Admin,
    );
  });

  it("loads the dashboard under its Content-Security-Policy, and the API answers unsniffed and uncached", async () => {
    const page = await (await harness.browser.newContext()).newPage();
    const apiAnswer = page.waitForResponse(
      (response) => new URL(response.url()).pathname === "/api/runbooks",
    );
    const document = await page.goto(`${harness.apiUrl}/#token=${harness.tokens.Reader}`);
    await page.getByRole("heading", { name: "Runbooks" }).waitFor();

    const pageHeaders = document!.headers();
    const csp = pageHeaders["content-security-policy"];
    expect(csp, "the page's Content-Security-Policy").toBeDefined();
    const policy = Object.fromEntries(
      csp!.split(";").map((directive) => {
        const [name, ...sources] = directive.trim().split(/\s+/);
        return [name, sources.join(" ")];
      }),
    );
    expect(policy).toMatchObject({
      "default-src": "'self'",
      "script-src": "'self'",
      "style-src": "'self'",
      "connect-src": "'self'",
      "object-src": "'none'",
      "base-uri": "'none'",
      "frame-ancestors": "'none'",
    });
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(pageHeaders).toMatchObject({
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    });

    const answer = await apiAnswer;
    expect(answer.status()).toBe(200);
    expect(await answer.allHeaders()).toMatchObject({
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
      "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
    });
    await page.context().close();
  });

  it("signs out to the paste-a-token form, and a pasted token signs in again", async () => {
    const page = await harness.newPage("Operator");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.getByLabel("Token").fill("not a token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("That is not a token").waitFor();
    await page.getByLabel("Token").fill(harness.tokens.Operator);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Runbooks" }).waitFor();
    await expect(page.getByTestId("user-name").textContent()).resolves.toBe("operator@example.test");
    await page.context().close();
  });

  it("marks each problem of a refused runbook at its line, then publishes the fixed one", async () => {
    const { page } = harness;
    const broken = example("bad-runbook.yaml");
    await page.goto(`${harness.apiUrl}/#/publish`);
    await page.getByLabel("Runbook YAML").fill(broken);
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    const errorBox = page.getByTestId("publish-error");
    await errorBox.waitFor();

    // The lines the API names (runbook.invalid problems) are the lines the editor marks.
    const refused = await fetch(`${harness.apiUrl}/api/runbooks`, {
      method: "POST",
      headers: { Authorization: `Bearer ${harness.tokens.Admin}`, "Content-Type": "application/yaml" },
      body: broken,
    });
    const problems = ((await refused.json()) as { problems: { line?: number; message: string }[] }).problems;
    const lines = [
      ...new Set(problems.flatMap((problem) => (problem.line === undefined ? [] : [problem.line]))),
    ];
    expect(lines.length).toBeGreaterThan(0);
    const marked = await page
      .locator(".gutter-line.marked")
      .evaluateAll((rows) => rows.map((row) => Number((row as HTMLElement).dataset.line)));
    expect(marked.sort((a, b) => a - b)).toEqual(lines.sort((a, b) => a - b));
    for (const problem of problems) await errorBox.getByText(problem.message).first().waitFor();

    // "Line N" moves the caret to that line of the editor.
    const target = lines[lines.length - 1]!;
    await errorBox
      .getByRole("button", { name: new RegExp(`^Line ${target}\\b`) })
      .first()
      .click();
    const caretLine = await page
      .getByLabel("Runbook YAML")
      .evaluate(
        (area) =>
          (area as HTMLTextAreaElement).value
            .slice(0, (area as HTMLTextAreaElement).selectionStart)
            .split("\n").length,
      );
    expect(caretLine).toBe(target);

    await page.getByLabel("Runbook YAML").fill(example("contoso-pilot.yaml"));
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    await page.getByRole("heading", { name: "contoso-pilot", level: 1 }).waitFor();
    await page
      .getByRole("region", { name: /YAML of contoso-pilot version 1/ })
      .getByText("name: contoso-pilot")
      .waitFor();
    await expect(page.getByTestId("automation-state").textContent()).resolves.toBe("Off");
  });

  it("creates a batch from a CSV upload and lists it with its member count", async () => {
    const { page } = harness;
    await page.goto(`${harness.apiUrl}/#/batches`);
    await page.getByRole("button", { name: "Create a batch" }).click();
    await page.getByLabel("Runbook").first().selectOption("contoso-pilot");
    await page.getByLabel("Members CSV").setInputFiles(path.join(harness.examplesDir, "members.csv"));
    await page.getByRole("button", { name: "Create batch" }).click();
    await page.waitForURL(/#\/batches\/\d+$/);
    const batchId = Number(/#\/batches\/(\d+)$/.exec(page.url())?.[1]);
    expect(batchId).toBeGreaterThan(0);

    await page.goto(`${harness.apiUrl}/#/batches?runbook=contoso-pilot`);
    const row = page.getByTestId(`batch-row-${batchId}`);
    await row.waitFor();
    await expect(page.getByTestId(`member-counts-${batchId}`).textContent()).resolves.toBe("3");
    await expect(row.locator(".badge").first().textContent()).resolves.toBe("detected");

    // A CSV with a mistake is refused with its line, and nothing is created.
    await page.getByRole("button", { name: "Create a batch" }).click();
    await page.getByLabel("Members CSV").setInputFiles({
      name: "broken.csv",
      mimeType: "text/csv",
      buffer: Buffer.from("UserPrincipalName,DisplayName\na@contoso.test,A\na@contoso.test,A again\n"),
    });
    await page.getByRole("button", { name: "Create batch" }).click();
    await page.getByTestId("create-batch-error").waitFor();
    const refusal = await page.getByTestId("create-batch-error").textContent();
    expect(refusal).toContain("member_data.invalid");
    expect(refusal).toContain("Line 3: duplicate primary key");
    const listed = await harness.api<unknown[]>("GET", "/batches?runbook=contoso-pilot");
    expect(listed).toHaveLength(1);
  });

  it("shows a Reader no action, and the API refuses a Reader's write anyway", async () => {
    const page = await harness.newPage("Reader");
    await page.getByRole("heading", { name: "Runbooks" }).waitFor();
    await page.getByRole("link", { name: "contoso-pilot" }).waitFor();
    expect(await page.getByRole("link", { name: "Publish a runbook" }).count()).toBe(0);

    await page.getByRole("link", { name: "contoso-pilot" }).click();
    await page.getByTestId("automation-state").waitFor();
    for (const name of ["Publish a new version", "Create a batch"]) {
      expect(await page.getByRole("link", { name }).count(), name).toBe(0);
    }
    for (const name of ["Turn automation on", "Preview the query", "Check the tenant"]) {
      expect(await page.getByRole("button", { name }).count(), name).toBe(0);
    }

    await page.getByRole("link", { name: "Batches", exact: true }).first().click();
    await page.getByRole("table", { name: "Batches" }).waitFor();
    expect(await page.getByRole("button", { name: "Create a batch" }).count()).toBe(0);

    await expect(
      harness.api(
        "PUT",
        "/runbooks/contoso-pilot/automation",
        '{"enabled":true}',
        "application/json",
        "Reader",
      ),
    ).rejects.toThrow(/answered 403/);
    await page.context().close();
  });
});

describe("automation switch (browser)", { timeout: 60_000 }, () => {
  it("turns automation on after a confirmation, and off again", async () => {
    const { page } = harness;
    await page.goto(`${harness.apiUrl}/#/runbooks/contoso-pilot`);
    await expect(page.getByTestId("automation-state").textContent()).resolves.toBe("Off");
    await page.getByRole("button", { name: "Turn automation on" }).click();
    const dialog = page.getByRole("dialog", { name: "Turn automation on?" });
    await dialog.getByRole("button", { name: "Back" }).click();
    await dialog.waitFor({ state: "hidden" });
    await expect(page.getByTestId("automation-state").textContent()).resolves.toBe("Off");

    await page.getByRole("button", { name: "Turn automation on" }).click();
    await dialog.getByRole("button", { name: "Turn on" }).click();
    await page.getByRole("button", { name: "Turn automation off" }).waitFor();
    await expect(page.getByTestId("automation-state").textContent()).resolves.toBe("On");
    await expect(
      harness.api<{ automationEnabled: boolean }>("GET", "/runbooks/contoso-pilot/automation"),
    ).resolves.toMatchObject({ automationEnabled: true, enabledBy: "admin@example.test" });

    await page.getByRole("button", { name: "Turn automation off" }).click();
    await page
      .getByRole("dialog", { name: "Turn automation off?" })
      .getByRole("button", { name: "Turn off" })
      .click();
    await page.getByRole("button", { name: "Turn automation on" }).waitFor();
    await expect(page.getByTestId("automation-state").textContent()).resolves.toBe("Off");
  });
});

describe("query preview (browser)", { timeout: 60_000 }, () => {
  it("shows the source's rows and the batch a tick would form, writing nothing", async () => {
    const { page } = harness;
    await page.goto(`${harness.apiUrl}/#/runbooks/contoso-pilot`);
    await page.getByRole("button", { name: "Preview the query" }).click();
    const preview = page.getByTestId("query-preview");
    await preview.waitFor();
    const rows = preview.getByRole("table", { name: "Source rows" }).locator("tbody tr");
    await expect(rows.count()).resolves.toBe(3);
    await preview.getByRole("cell", { name: "adele.vance@contoso.test" }).waitFor();
    const formed = preview
      .getByRole("table", { name: "Batches the scheduler would form" })
      .locator("tbody tr");
    await expect(formed.count()).resolves.toBe(1);
    await expect(formed.locator("td").nth(1).textContent()).resolves.toBe("3");
  });
});

describe("tenant check (browser)", { timeout: 60_000 }, () => {
  it("runs the pre-flight check for the runbook and lists its lines, naming what is missing", async () => {
    const { page } = harness;
    await page.goto(`${harness.apiUrl}/#/runbooks/contoso-pilot`);
    await page.getByRole("button", { name: "Check the tenant" }).click();
    const report = page.getByTestId("tenant-check");
    await report.waitFor();
    const table = report.getByRole("table", { name: "Tenant check" });
    await table.getByRole("cell", { name: "graph.token" }).waitFor();
    const permissions = table.locator("tbody tr", {
      has: page.getByRole("cell", { name: "graph.permissions" }),
    });
    await expect(permissions.locator("td").nth(1).textContent()).resolves.toBe("passed");
  });
});
