import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { auditPage } from "../../test/axe-audit.ts";
import { startBrowserHarness, type BrowserHarness } from "../../test/browser-harness.ts";
import { createBatch, exampleCsv, publishPilot } from "../../test/pages/batch/batch-fixtures.ts";

/**
 * Issue 13 asks for an accessible dashboard (keyboard, labels, contrast). axe-core, the engine
 * behind Lighthouse's and the browsers' accessibility audits, checks every main page against
 * WCAG 2.x A and AA (labels, names, roles, colour contrast, landmarks, ARIA use) at laptop and
 * tablet widths, with each page in the state an operator sees it in (a refused publish with its
 * marks, a batch with a failed member and its details open).
 */

let harness: BrowserHarness;
let batchId: number;

beforeAll(async () => {
  harness = await startBrowserHarness();
  await publishPilot(harness);
  batchId = await createBatch(harness, await exampleCsv(harness, "members-one-fails.csv"));
}, 120_000);

// The dashboard works under its Content-Security-Policy: no page reported a violation.
afterEach(async () => {
  expect(await harness?.takeCspViolations(), "Content-Security-Policy violations").toEqual([]);
});

afterAll(async () => {
  await harness?.stop();
});

const widths = [
  { name: "laptop", viewport: { width: 1280, height: 800 } },
  { name: "tablet", viewport: { width: 768, height: 1024 } },
];

describe("accessibility (axe-core, WCAG 2.1 A/AA)", { timeout: 120_000 }, () => {
  for (const { name, viewport } of widths) {
    it(`finds no violation on the main pages at ${name} width`, async () => {
      const page = await harness.newPage("Admin");
      await page.setViewportSize(viewport);
      const found: Record<string, string[]> = {};
      const audit = async (label: string) => {
        const violations = await auditPage(page);
        if (violations.length > 0) found[label] = violations;
      };

      await page.goto(`${harness.apiUrl}/#/runbooks`);
      await page.getByRole("link", { name: "contoso-pilot" }).first().waitFor();
      await audit("runbooks");

      await page.goto(`${harness.apiUrl}/#/runbooks/contoso-pilot`);
      await page.locator(".code-view, pre").first().waitFor();
      await audit("runbook");

      await page.goto(`${harness.apiUrl}/#/publish`);
      await page.getByLabel("Runbook YAML").fill("name: broken\nphases: nope\n");
      await page.getByRole("button", { name: "Publish", exact: true }).click();
      await page.getByTestId("publish-error").waitFor();
      await audit("publish with problems");

      await page.goto(`${harness.apiUrl}/#/batches`);
      await page.getByTestId(`member-counts-${batchId}`).waitFor();
      await audit("batches");

      await page.goto(`${harness.apiUrl}/#/batches/${batchId}`);
      await page.locator('[data-testid="grid-row"][data-member-key="alex.wilber@contoso.test"]').waitFor();
      await page.locator('[role="gridcell"]').first().hover();
      await page.getByTestId("cell-details").waitFor();
      await audit("batch");

      await page.locator(".batch-actions").getByRole("button", { name: "Cancel batch", exact: true }).click();
      await page.locator("dialog.confirm-dialog[open]").waitFor();
      await audit("confirmation dialog");
      await page.keyboard.press("Escape");

      const signedOut = await harness.browser.newPage({ viewport });
      await signedOut.goto(`${harness.apiUrl}/`);
      await signedOut.getByRole("heading", { name: "Sign in" }).waitFor();
      const signIn = await auditPage(signedOut);
      if (signIn.length > 0) found["sign-in"] = signIn;
      await signedOut.close();
      await page.context().close();

      expect(found).toEqual({});
    });
  }
});
