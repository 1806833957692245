import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../../test/browser-harness.ts";
import {
  createBatch,
  exampleCsv,
  publishPilot,
  waitForApiStatus,
} from "../../../test/pages/batch/batch-fixtures.ts";

/**
 * The batch page speaks in members, phases and steps (issue 26): the grid's phase and step
 * headers read whole at laptop and tablet widths, and the event timeline names the member and the
 * runbook's step (not "step 10"), keeping the ids in a tooltip.
 */
let harness: BrowserHarness;
let batchId: number;

beforeAll(async () => {
  harness = await startBrowserHarness();
  await publishPilot(harness);
  batchId = await createBatch(harness, await exampleCsv(harness, "members-one-fails.csv"));
  // Init, then pre-checks: the timeline then has phase, step and member events.
  await harness.api("POST", `/batches/${batchId}/advance`);
  await waitForApiStatus(harness, batchId, ["active"]);
  await harness.api("POST", `/batches/${batchId}/advance`);
}, 180_000);

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

interface HeaderFit {
  readonly text: string;
  readonly fits: boolean;
}

describe("batch page wording", { timeout: 120_000 }, () => {
  for (const { name, viewport } of widths) {
    it(`shows whole phase and step headers and names members and steps in events at ${name} width`, async () => {
      const page = await harness.newPage("Reader");
      await page.setViewportSize(viewport);
      await page.goto(`${harness.apiUrl}/#/batches/${batchId}`);
      await page.locator('[data-testid="grid-row"][data-member-key="adele.vance@contoso.test"]').waitFor();

      // Every phase header shows its whole name (no ellipsis, nothing clipped); so does every
      // step header (written vertically: its text runs along the height).
      const fit = (selector: string, vertical: boolean) =>
        page.locator(selector).evaluateAll(
          (elements, along) =>
            elements.map((element) => ({
              text: element.textContent ?? "",
              fits: along
                ? element.scrollHeight <= element.clientHeight
                : element.scrollWidth <= element.clientWidth,
            })),
          vertical,
        );
      const phases: HeaderFit[] = await fit(".phase-head", false);
      expect(phases).toEqual([
        { text: "pre-checks", fits: true },
        { text: "cutover", fits: true },
      ]);
      const steps: HeaderFit[] = await fit(".step-head span", true);
      expect(steps).toEqual(
        ["validate-source-mailbox", "notify-user", "start-mailbox-move", "set-primary-email"].map((text) => ({
          text,
          fits: true,
        })),
      );

      // An event about a step names its member (as the grid does) and the runbook's step; the
      // step execution's id stays in its tooltip. A phase event names the phase.
      const stepEvent = page.locator('[data-testid="event"][data-entity="step"]');
      await stepEvent.first().waitFor({ timeout: 60_000 });
      const stepSubjects = await stepEvent.locator(".event-entity").allTextContents();
      expect(stepSubjects).toContain("adele.vance@contoso.test · validate-source-mailbox");
      const adele = stepEvent
        .filter({ hasText: "adele.vance@contoso.test · validate-source-mailbox" })
        .first()
        .locator(".event-entity");
      await expect(adele.getAttribute("title")).resolves.toMatch(/^step execution \d+ · phase pre-checks$/);
      const phaseSubjects = await page
        .locator('[data-testid="event"][data-entity="phase"] .event-entity')
        .allTextContents();
      expect(phaseSubjects).toContain("phase pre-checks");
      await page.close();
    });
  }
});
