import type { Request } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../../test/browser-harness.ts";
import {
  confirmAction,
  createBatch,
  exampleCsv,
  openAction,
  publishPilot,
  waitForApiStatus,
  waitForBatchStatus,
} from "../../../test/pages/batch/batch-fixtures.ts";

/**
 * The batch page's pause/resume (and a 409 shown with its reason), and the virtualised grid: a
 * batch of 1,000 members keeps only the rows in view in the DOM, reading its pages as it scrolls.
 */
let harness: BrowserHarness;

beforeAll(async () => {
  harness = await startBrowserHarness();
  await publishPilot(harness);
}, 120_000);

// The dashboard works under its Content-Security-Policy: no page reported a violation.
afterEach(async () => {
  expect(await harness?.takeCspViolations(), "Content-Security-Policy violations").toEqual([]);
});

afterAll(async () => {
  await harness?.stop();
});

// Ten grid pages: enough to show that rows come and go (a 10,000-member batch is the same code
// with more pages), small enough to create quickly on the embedded database under CI load.
const MEMBERS = 1_000;

function largeCsv(count: number): string {
  const rows = Array.from(
    { length: count },
    (_, i) =>
      `user${String(i).padStart(5, "0")}@contoso.test,User ${i},user${i}@fabrikam.test,smtp:u${i}@contoso.test,2026-12-05T09:00:00Z,Echo`,
  );
  return `UserPrincipalName,DisplayName,TargetEmail,ProxyAddresses,MigrationDate,PreCheck\n${rows.join("\n")}\n`;
}

describe("batch page controls", { timeout: 120_000 }, () => {
  it("pauses and resumes a batch through the UI, and shows a 409 with its reason when the batch moved meanwhile", async () => {
    const batchId = await createBatch(harness, await exampleCsv(harness, "members.csv"));
    await harness.api("POST", `/batches/${batchId}/advance`);
    await waitForApiStatus(harness, batchId, ["active"]);
    const { page } = harness;
    await page.goto(`${harness.apiUrl}/#/batches/${batchId}`);
    await waitForBatchStatus(page, "active");

    await confirmAction(page, "Pause");
    await waitForBatchStatus(page, "paused");
    await page.locator('[data-testid="event"][data-entity="batch"][data-to="paused"]').waitFor();
    await confirmAction(page, "Resume");
    await waitForBatchStatus(page, "active");

    // Someone else pauses it while the dialog is open: the API refuses, the dialog says why.
    const dialog = await openAction(page, "Pause");
    await harness.api("POST", `/batches/${batchId}/pause`);
    await dialog.getByRole("button", { name: "Pause" }).click();
    const alert = dialog.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      `batch ${batchId} is paused; only an active batch can be paused (409 state.conflict)`,
    );
    await dialog.getByRole("button", { name: "Back" }).click();
    await waitForBatchStatus(page, "paused");
  });

  it("sends an Idempotency-Key with each action, the same one when a click is retried after a network failure", async () => {
    const batchId = await createBatch(harness, await exampleCsv(harness, "members.csv"));
    await harness.api("POST", `/batches/${batchId}/advance`);
    await waitForApiStatus(harness, batchId, ["active"]);
    const { page } = harness;
    const keys: Array<[string, string | null]> = [];
    const onRequest = (request: Request) => {
      if (request.method() === "POST")
        keys.push([new URL(request.url()).pathname, request.headers()["idempotency-key"] ?? null]);
    };
    page.on("request", onRequest);
    // The first pause never reaches the API: the connection drops, as on a flaky network.
    let drops = 1;
    const pausePath = `**/api/batches/${batchId}/pause`;
    await page.route(pausePath, (route) => (drops-- > 0 ? route.abort("connectionreset") : route.continue()));
    try {
      await page.goto(`${harness.apiUrl}/#/batches/${batchId}`);
      await waitForBatchStatus(page, "active");

      const dialog = await openAction(page, "Pause");
      await dialog.getByRole("button", { name: "Pause" }).click();
      await dialog.getByRole("alert").waitFor();
      expect(await dialog.getByRole("alert").textContent()).toContain("did not answer");
      // The same click again: the same action, so the same key.
      await dialog.getByRole("button", { name: "Pause" }).click();
      await page.locator("dialog.confirm-dialog[open]").waitFor({ state: "detached", timeout: 60_000 });
      await waitForBatchStatus(page, "paused");
      await confirmAction(page, "Resume");
      await waitForBatchStatus(page, "active");
    } finally {
      page.off("request", onRequest);
      await page.unroute(pausePath);
    }

    const pauseUrl = `/api/batches/${batchId}/pause`;
    expect(keys.map(([path]) => path)).toEqual([pauseUrl, pauseUrl, `/api/batches/${batchId}/resume`]);
    const [[, dropped], [, retried], [, resumed]] = keys as [
      [string, string],
      [string, string],
      [string, string],
    ];
    expect(dropped).toMatch(/^[0-9a-f-]{36}$/);
    expect(retried).toBe(dropped);
    expect(resumed).toMatch(/^[0-9a-f-]{36}$/);
    expect(resumed).not.toBe(dropped);
  });

  it(`renders only the rows in view of a ${MEMBERS}-member batch, and reaches the last by keyboard`, async () => {
    const batchId = await createBatch(harness, largeCsv(MEMBERS));
    const { page } = harness;
    await page.goto(`${harness.apiUrl}/#/batches/${batchId}`);
    const grid = page.getByTestId("member-grid");
    await page.locator('[data-testid="grid-row"][data-member-key="user00000@contoso.test"]').waitFor();
    await expect(grid.getAttribute("data-member-total")).resolves.toBe(String(MEMBERS));
    await expect(grid.getAttribute("aria-rowcount")).resolves.toBe(String(MEMBERS + 2));
    const rowsAtTop = await page.getByTestId("grid-row").count();
    expect(rowsAtTop).toBeGreaterThan(5);
    expect(rowsAtTop).toBeLessThan(100);

    // Ctrl+End from the first cell: the last member's row is read and rendered, focus on its last cell.
    // locator.press focuses the cell and presses in one step: nothing can take the focus between.
    await page.locator('[data-testid="grid-row"] [data-row="0"][data-col="1"]').press("Control+End");
    const lastKey = `user${String(MEMBERS - 1).padStart(5, "0")}@contoso.test`;
    await page.locator(`[data-testid="grid-row"][data-member-key="${lastKey}"]`).waitFor();
    // The active cell (roving tabindex) is the last member's: keyboard navigation reached it.
    await page
      .locator(
        `[data-testid="grid-row"][data-member-key="${lastKey}"] [data-row="${MEMBERS - 1}"][tabindex="0"]`,
      )
      .waitFor();
    const rowsAtEnd = await page.getByTestId("grid-row").count();
    expect(rowsAtEnd).toBeLessThan(100);
    expect(
      await page.locator('[data-testid="grid-row"][data-member-key="user00000@contoso.test"]').count(),
    ).toBe(0);
  }, 120_000);
});
