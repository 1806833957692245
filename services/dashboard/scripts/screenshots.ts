// `npm run screenshots`: runs the whole system (embedded PostgreSQL in a temporary data
// directory, or DATABASE_URL when set; simulated tenant), publishes the example runbook, runs a
// demo batch, and saves PNGs of the dashboard's main pages into docs/screenshots/ for docs/dashboard.md.
/* eslint-disable no-restricted-properties -- an entry point (like scripts/**), so it reads the environment */
import { chmod, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { issueLocalToken } from "@matoolkit/admin-api";
import { startAll } from "@matoolkit/all-in-one";
import { freePort } from "@matoolkit/dapr-harness/free-port";
import type { Page } from "playwright-core";
import { launchChromium, signedInPage } from "../test/chromium.ts";
import { buildDashboard, dashboardRoot, isDashboardBuildStale } from "./dashboard-build.ts";

const repoRoot = path.resolve(dashboardRoot, "../..");
const examples = path.join(repoRoot, "examples");
const outDir = path.join(repoRoot, "docs", "screenshots");
const viewport = { width: 1280, height: 800 };
/** How long to wait for the demo batch to make progress before taking its picture anyway. */
const DEMO_WAIT_MS = 60_000;

if (await isDashboardBuildStale()) await buildDashboard();
await mkdir(outDir, { recursive: true });
const dataDir = await mkdtemp(path.join(tmpdir(), "matoolkit-screenshots-"));
// As root, embedded PostgreSQL runs as the `postgres` user, who must be able to enter the
// directory (mkdtemp makes it private); else its cluster would go to /var/lib/matoolkit and stay.
await chmod(dataDir, 0o755);
const system = await startAll({
  ...(process.env.DATABASE_URL === undefined ? {} : { DATABASE_URL: process.env.DATABASE_URL }),
  MATOOLKIT_DATA_DIR: dataDir,
  MATOOLKIT_EMBEDDED_PG_PORT: String(await freePort()),
  MATOOLKIT_CSV_DIR: examples,
  MATOOLKIT_TENANT: "simulated",
  MATOOLKIT_DUPLICATE_BATCH_WINDOW_MINUTES: "0",
  PORT: "0",
  LOG_LEVEL: "error",
});
const browser = await launchChromium(process.env.CHROMIUM_PATH);
try {
  const token = await issueLocalToken({
    dataDir,
    issuer: "matoolkit-local",
    audience: "api://matoolkit",
    roles: ["Admin"],
    name: "alex.admin@contoso.test",
    ttlSeconds: 3600,
  });
  const api = apiClient(system.apiUrl, token);
  await api("POST", "/runbooks", { yaml: await readFile(path.join(examples, "contoso-pilot.yaml"), "utf8") });
  const csv = await readFile(path.join(examples, "members.csv"), "utf8");
  const cancelled = (await api("POST", "/batches?runbook=contoso-pilot", csv, "text/csv")) as { id: number };
  await api("POST", `/batches/${cancelled.id}/cancel`);
  const oneFails = await readFile(path.join(examples, "members-one-fails.csv"), "utf8");
  const batch = (await api("POST", "/batches?runbook=contoso-pilot", oneFails, "text/csv")) as { id: number };
  await runDemoBatch(api, batch.id);

  const page = await signedInPage(browser, system.apiUrl, token, viewport);
  await shoot(page, "#/runbooks", "runbooks.png", async () => {
    await page.getByRole("link", { name: "contoso-pilot" }).waitFor();
  });
  await shoot(page, "#/runbooks/contoso-pilot", "runbook.png", async () => {
    await page.getByTestId("automation-state").waitFor();
    await page.getByRole("button", { name: "Preview the query" }).click();
    await page.getByTestId("query-preview").waitFor();
  });
  await shoot(page, "#/publish", "publish-error.png", async () => {
    await page
      .getByLabel("Runbook YAML")
      .fill(await readFile(path.join(examples, "bad-runbook.yaml"), "utf8"));
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    await page.getByTestId("publish-error").waitFor();
    await page.getByLabel("Runbook YAML").blur();
  });
  await shoot(page, "#/batches", "batches.png", async () => {
    await page.getByTestId(`member-counts-${batch.id}`).waitFor();
    await page.getByTestId(`member-counts-${cancelled.id}`).waitFor();
  });
  const batchReady = async () => {
    await page.locator("main h1").waitFor();
    await page.locator('[data-testid="event"]').first().waitFor();
    // The batch page loads its pieces separately; let them arrive (best effort for a picture).
    await page.waitForLoadState("networkidle", { timeout: 5_000 }).catch(() => undefined);
    // No focused cell's details over the grid in the picture.
    await page.keyboard.press("Escape");
    await page.mouse.move(0, 0);
  };
  await shoot(page, `#/batches/${batch.id}`, "batch.png", batchReady);
  await page.setViewportSize({ width: 768, height: 900 });
  await shoot(page, "#/batches", "batches-768.png", async () => {
    await page.getByTestId(`member-counts-${batch.id}`).waitFor();
  });
  await shoot(page, `#/batches/${batch.id}`, "batch-768.png", batchReady);
  process.stdout.write(`Screenshots written to ${path.relative(process.cwd(), outDir)}/\n`);
} finally {
  await browser.close();
  await system.stop();
  await rm(dataDir, { recursive: true, force: true });
}

async function shoot(page: Page, hash: string, file: string, ready: () => Promise<void>): Promise<void> {
  await page.goto(`${system.apiUrl}/${hash}`);
  await ready();
  await page.screenshot({ path: path.join(outDir, file), fullPage: true });
  process.stdout.write(`  ${file}\n`);
}

type Api = (method: string, apiPath: string, body?: unknown, contentType?: string) => Promise<unknown>;

function apiClient(origin: string, token: string): Api {
  return async (method, apiPath, body, contentType = "application/json") => {
    const response = await fetch(`${origin}/api${apiPath}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": contentType },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${apiPath}: ${response.status} ${text}`);
    return text === "" ? undefined : JSON.parse(text);
  };
}

/** Init, then both phases, each advanced once the one before has ended, so the page has history. */
async function runDemoBatch(api: Api, batchId: number): Promise<void> {
  const deadline = Date.now() + DEMO_WAIT_MS;
  type Detail = { status: string; phases: { status: string }[] };
  const read = () => api("GET", `/batches/${batchId}`) as Promise<Detail>;
  const until = async (done: (detail: Detail) => boolean) => {
    while (Date.now() < deadline) {
      if (done(await read())) return true;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return false;
  };
  await api("POST", `/batches/${batchId}/advance`);
  if (!(await until((detail) => detail.status === "active"))) return;
  await api("POST", `/batches/${batchId}/advance`);
  if (
    !(await until(
      (detail) => detail.phases[0]?.status !== "pending" && detail.phases[0]?.status !== "dispatched",
    ))
  )
    return;
  await api("POST", `/batches/${batchId}/advance`).catch(() => undefined);
  await until((detail) => ["completed", "failed"].includes(detail.status));
}
