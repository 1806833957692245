import { raiseAlert, resolveAlert } from "@matoolkit/db";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../test/browser-harness.ts";

/**
 * The open-alerts banner (issue 31) in headless Chromium against the whole system: shown above the
 * page while alerts are open, to a Reader as to an Admin, gone once they are resolved.
 */
let harness: BrowserHarness;

beforeAll(async () => {
  harness = await startBrowserHarness();
}, 120_000);

afterEach(async () => {
  expect(await harness?.takeCspViolations(), "Content-Security-Policy violations").toEqual([]);
});

afterAll(async () => {
  await harness?.stop();
});

describe("alerts banner (browser)", { timeout: 60_000 }, () => {
  it("lists the open alerts, critical first and linked to their runbook, and disappears when they are resolved", async () => {
    const { page } = harness;
    const db = harness.system.platform.db;
    await page.getByRole("heading", { name: "Runbooks" }).waitFor();
    expect(await page.getByTestId("alerts-banner").count()).toBe(0);

    const at = new Date();
    const failing = await raiseAlert(
      db,
      {
        conditionId: "source-failing",
        severity: "critical",
        subject: "runbook:hr-feed",
        runbookName: "hr-feed",
        batchId: null,
        details: { consecutiveFailures: 3 },
      },
      at,
    );
    const throttled = await raiseAlert(
      db,
      {
        conditionId: "throttled-share",
        severity: "warning",
        subject: "pool:worker-01",
        runbookName: null,
        batchId: null,
        details: { share: 0.3 },
      },
      at,
    );
    await page.reload();
    const banner = page.getByTestId("alerts-banner");
    await banner.waitFor();
    await expect(banner.getByRole("heading").textContent()).resolves.toBe("2 open alerts (1 critical)");
    const items = await banner.locator("li").allTextContents();
    expect(items).toEqual([
      "critical A runbook's data source failed several scheduler ticks in a row: runbook:hr-feed",
      "warning The tenant throttles a large share of a worker pool's work: pool:worker-01",
    ]);
    await expect(banner.getByRole("link").getAttribute("href")).resolves.toBe("#/runbooks/hr-feed");

    const reader = await harness.newPage("Reader");
    await reader.getByTestId("alerts-banner").waitFor();

    await resolveAlert(db, failing!.id, new Date());
    await resolveAlert(db, throttled!.id, new Date());
    await page.reload();
    await page.getByRole("heading", { name: "Runbooks" }).waitFor();
    expect(await page.getByTestId("alerts-banner").count()).toBe(0);
  });
});
