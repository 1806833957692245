import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { auditPage } from "../../../test/axe-audit.ts";
import { startBrowserHarness, type BrowserHarness } from "../../../test/browser-harness.ts";
import {
  exampleCsv,
  waitForApiStatus,
  waitForBatchStatus,
} from "../../../test/pages/batch/batch-fixtures.ts";

/**
 * A phase's approval gate on the batch page (issue 30): the cutover of a gated copy of the pilot
 * runbook waits for approval; a Reader sees it wait with no button, an Admin approves it from the
 * phase's card behind a confirmation, and the batch runs to its end.
 */
let harness: BrowserHarness;
const RUNBOOK = "contoso-pilot-gated";

beforeAll(async () => {
  harness = await startBrowserHarness();
  const pilot = await readFile(path.join(harness.examplesDir, "contoso-pilot.yaml"), "utf8");
  const gated = pilot
    .replace(/^name: contoso-pilot$/m, `name: ${RUNBOOK}`)
    .replace(/^( {2}- name: cutover\n {4}offset: T-0\n)/m, "$1    approval: required\n");
  expect(gated).toContain("approval: required");
  await harness.api("POST", "/runbooks", gated, "application/yaml");
}, 120_000);

afterEach(async () => {
  expect(await harness?.takeCspViolations(), "Content-Security-Policy violations").toEqual([]);
});

afterAll(async () => {
  await harness?.stop();
});

/** A batch advanced to its gate: init, pre-checks completed, cutover awaiting approval. */
async function batchAtGate(): Promise<number> {
  const csv = await exampleCsv(harness, "members.csv");
  const { id } = await harness.api<{ id: number }>("POST", `/batches?runbook=${RUNBOOK}`, csv, "text/csv");
  await harness.api("POST", `/batches/${id}/advance`);
  await waitForApiStatus(harness, id, ["active"]);
  await harness.api("POST", `/batches/${id}/advance`);
  for (;;) {
    const batch = await harness.api<{ phases: { phaseName: string; status: string }[] }>(
      "GET",
      `/batches/${id}`,
    );
    if (batch.phases.find((phase) => phase.phaseName === "pre-checks")?.status === "completed") break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await harness.api("POST", `/batches/${id}/advance`);
  return id;
}

const cutoverCard = '[data-testid="phase"][data-phase="cutover"]';

describe("a phase awaiting approval on the batch page", { timeout: 180_000 }, () => {
  it("shows the gate to a Reader without a button, and lets an Admin approve it; the batch then runs to its end", async () => {
    const batchId = await batchAtGate();

    const reader = await harness.newPage("Reader");
    await reader.goto(`${harness.apiUrl}/#/batches/${batchId}`);
    const readerCard = reader.locator(`${cutoverCard}[data-status="awaiting_approval"]`);
    await readerCard.waitFor();
    expect(await readerCard.getByTestId("phase-approval").textContent()).toContain("Awaiting approval");
    expect(await readerCard.getByText("An Operator or Admin approves or rejects it.").count()).toBe(1);
    expect(await readerCard.getByRole("button").count()).toBe(0);
    await reader.close();

    const { page } = harness;
    await page.goto(`${harness.apiUrl}/#/batches/${batchId}`);
    const card = page.locator(`${cutoverCard}[data-status="awaiting_approval"]`);
    await card.waitFor();
    expect(await card.getByRole("button", { name: "Reject" }).count()).toBe(1);
    // The gate and its buttons pass the WCAG 2.1 A/AA audit the other pages pass.
    expect(await auditPage(page)).toEqual([]);
    await card.getByRole("button", { name: "Approve" }).click();
    const dialog = page.locator("dialog.confirm-dialog[open]");
    await dialog.waitFor();
    expect(await dialog.getByRole("heading").textContent()).toBe("Approve the phase cutover?");
    expect(await auditPage(page)).toEqual([]);
    await dialog.getByRole("button", { name: "Approve" }).click();
    await page.locator("dialog.confirm-dialog[open]").waitFor({ state: "detached", timeout: 60_000 });

    await waitForBatchStatus(page, "completed");
    expect(await page.locator(cutoverCard).getByTestId("phase-approval").textContent()).toContain(
      "Approval: approved",
    );
    // The timeline names the gate and who lifted it.
    await page
      .locator('[data-testid="event"][data-entity="phase"][data-to="awaiting_approval"]')
      .first()
      .waitFor();
  });
});
