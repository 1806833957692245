import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startBrowserHarness, type BrowserHarness } from "../../../test/browser-harness.ts";
import { exampleCsv, publishPilot } from "../../../test/pages/batch/batch-fixtures.ts";

/**
 * Issue 31 on the batches page, in headless Chromium as a Reader: the member search box finds
 * every batch a key is in (case ignored) without putting the key in the URL, and the change
 * ticket filter and column show a batch's externalRef; the batch page shows it too.
 */
let harness: BrowserHarness;
let withTicket: number;
let withoutTicket: number;

beforeAll(async () => {
  harness = await startBrowserHarness({ role: "Reader" });
  await publishPilot(harness);
  const create = async (csv: string, query: string) =>
    (await harness.api<{ id: number }>("POST", `/batches?runbook=contoso-pilot${query}`, csv, "text/csv")).id;
  withTicket = await create(await exampleCsv(harness, "members.csv"), "&externalRef=CHG-DASH-1");
  withoutTicket = await create(await exampleCsv(harness, "members-one-fails.csv"), "");
}, 120_000);

afterEach(async () => {
  expect(await harness?.takeCspViolations(), "Content-Security-Policy violations").toEqual([]);
});

afterAll(async () => {
  await harness?.stop();
});

describe("batches page search", { timeout: 120_000 }, () => {
  it("finds a member key across batches, ignoring case, and keeps the key out of the URL", async () => {
    const { page } = harness;
    await page.goto(`${harness.apiUrl}/#/batches`);
    await page.getByLabel("Find a member").fill("ADELE.VANCE@contoso.test");
    await page.getByRole("button", { name: "Find" }).click();
    const results = page.getByRole("table", { name: "Batches of this member" });
    await results.getByTestId(`member-batch-${withTicket}`).waitFor();
    expect(await results.locator("tbody tr").count()).toBe(2);
    expect(await results.getByTestId(`member-batch-${withTicket}`).textContent()).toContain("CHG-DASH-1");
    expect(await results.getByTestId(`member-batch-${withoutTicket}`).textContent()).toContain(
      "adele.vance@contoso.test",
    );
    expect(page.url()).not.toContain("adele");

    await page.getByLabel("Find a member").fill("nobody@contoso.test");
    await page.getByRole("button", { name: "Find" }).click();
    await page.getByTestId("member-search-empty").waitFor();
  });

  it("filters by change ticket from the URL, shows the ticket column and the batch page's ticket", async () => {
    const { page } = harness;
    await page.goto(`${harness.apiUrl}/#/batches?externalRef=CHG-DASH-1`);
    await page.getByTestId(`batch-row-${withTicket}`).waitFor();
    // The unfiltered page (the previous test's) stays on screen until the filtered answer comes.
    await page.getByTestId(`batch-row-${withoutTicket}`).waitFor({ state: "detached" });
    expect(await page.getByRole("table", { name: "Batches" }).locator("tbody tr").count()).toBe(1);
    expect(await page.getByTestId(`batch-row-${withTicket}`).textContent()).toContain("CHG-DASH-1");
    expect(await page.getByLabel("Change ticket").inputValue()).toBe("CHG-DASH-1");

    await page.goto(`${harness.apiUrl}/#/batches/${withTicket}`);
    expect(await page.getByTestId("batch-external-ref").textContent()).toBe("CHG-DASH-1");
  });
});
