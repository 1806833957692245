import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Locator, Page } from "playwright-core";
import type { BrowserHarness } from "../../browser-harness.ts";

/** Arranging batches through the public API, and reading the batch page, for the e2e tests. */

export async function publishPilot(harness: BrowserHarness): Promise<void> {
  const yaml = await readFile(path.join(harness.examplesDir, "contoso-pilot.yaml"), "utf8");
  await harness.api("POST", "/runbooks", yaml, "application/yaml");
}

export async function createBatch(harness: BrowserHarness, csv: string): Promise<number> {
  const created = await harness.api<{ id: number }>(
    "POST",
    "/batches?runbook=contoso-pilot",
    csv,
    "text/csv",
  );
  return created.id;
}

export async function exampleCsv(harness: BrowserHarness, file: string): Promise<string> {
  return readFile(path.join(harness.examplesDir, file), "utf8");
}

/** Waits (on the DOM, no fixed sleep) until the page shows the batch in `status`. */
export async function waitForBatchStatus(page: Page, status: string): Promise<void> {
  await page.locator(`[data-testid="batch-page"][data-status="${status}"]`).waitFor({ timeout: 120_000 });
}

/** Clicks a header action and confirms it in the dialog; resolves once the dialog has closed. */
export async function confirmAction(page: Page, label: string): Promise<void> {
  await openAction(page, label).then((dialog) => dialog.getByRole("button", { name: label }).click());
  // The dialog closes (loses `open`) once the API accepted the action.
  await page.locator("dialog.confirm-dialog[open]").waitFor({ state: "detached", timeout: 60_000 });
}

/** Clicks a header action; answers the open confirmation dialog. */
export async function openAction(page: Page, label: string): Promise<Locator> {
  await page.locator(".batch-actions").getByRole("button", { name: label, exact: true }).click();
  const dialog = page.locator("dialog.confirm-dialog[open]");
  await dialog.waitFor();
  return dialog;
}

/** Polls the API (not the clock) until the batch is in one of `statuses`. */
export async function waitForApiStatus(
  harness: BrowserHarness,
  batchId: number,
  statuses: string[],
): Promise<void> {
  for (;;) {
    const batch = await harness.api<{ status: string }>("GET", `/batches/${batchId}`);
    if (statuses.includes(batch.status)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
