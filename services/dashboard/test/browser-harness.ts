import { mkdir, mkdtemp, rm, rmdir, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { issueLocalToken } from "@matoolkit/admin-api";
import { startAll, type RunningSystem } from "@matoolkit/all-in-one";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import type { Browser, Page } from "playwright-core";
import { launchChromium, signedInPage } from "./chromium.ts";
import { watchCspViolations, type CspViolations } from "./csp-violations.ts";
import { buildDashboard, dashboardRoot, isDashboardBuildStale } from "../scripts/dashboard-build.ts";

/**
 * Test support for the dashboard's browser tests: the whole system (start-all, as `npm start`)
 * on a fresh test database with the simulated tenant, the dashboard built and served by its
 * admin API, and headless Chromium signed in through the start banner's `#token=` link.
 */
export type Role = "Admin" | "Operator" | "Reader";

export interface BrowserHarness {
  /** A page signed in with the role given to {@link startBrowserHarness} (default Admin; null: blank, signed out). */
  readonly page: Page;
  /** The system's origin, e.g. http://127.0.0.1:41234 (the dashboard is at `/`, the API at /api). */
  readonly apiUrl: string;
  readonly system: RunningSystem;
  /** The browser, for pages that must not be signed in (contexts of their own). */
  readonly browser: Browser;
  readonly tokens: Readonly<Record<Role, string>>;
  /** The examples/ folder (runbooks, CSV files to upload). */
  readonly examplesDir: string;
  /**
   * The Content-Security-Policy violations any page of the browser reported since the last call
   * (and forgets them): the browser tests expect none after each test.
   */
  takeCspViolations(): Promise<string[]>;
  /** A new page in its own browser context (own session storage), signed in with `role`. */
  newPage(role: Role): Promise<Page>;
  /** An API call with a role's token, for arranging state; throws on a non-2xx answer. */
  api<T = unknown>(
    method: string,
    apiPath: string,
    body?: string,
    contentType?: string,
    role?: Role,
  ): Promise<T>;
  stop(): Promise<void>;
}

/** Older than this, the build lock belongs to a process that is gone. */
const STALE_LOCK_MS = 120_000;

export const repoRoot = path.resolve(dashboardRoot, "../..");
const examplesDir = path.join(repoRoot, "examples");

export async function startBrowserHarness(
  options: {
    /** The role {@link BrowserHarness.page} signs in with; null: not signed in (default Admin). */
    role?: Role | null;
    /** More environment for startAll (e.g. a duplicate window). */
    env?: Record<string, string>;
    viewport?: { width: number; height: number };
    /** Default /usr/bin/chromium (Debian's package). */
    chromiumPath?: string;
  } = {},
): Promise<BrowserHarness> {
  await ensureDashboardBuilt();
  const database: TestDatabase = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(tmpdir(), "dashboard-e2e-"));
  let system: RunningSystem | undefined;
  let browser: Browser | undefined;
  const cleanup = async () => {
    await browser?.close();
    await system?.stop();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    system = await startAll({
      DATABASE_URL: database.url,
      MATOOLKIT_DATA_DIR: dataDir,
      MATOOLKIT_CSV_DIR: examplesDir,
      MATOOLKIT_TENANT: "simulated",
      MATOOLKIT_RUNTIME: "embedded",
      MATOOLKIT_DUPLICATE_BATCH_WINDOW_MINUTES: "0",
      PORT: "0",
      LOG_LEVEL: "silent",
      ...options.env,
    });
    const token = (role: Role) =>
      issueLocalToken({
        dataDir,
        issuer: "matoolkit-local",
        audience: "api://matoolkit",
        roles: [role],
        name: `${role.toLowerCase()}@example.test`,
        ttlSeconds: 3600,
      });
    const tokens = {
      Admin: await token("Admin"),
      Operator: await token("Operator"),
      Reader: await token("Reader"),
    };
    browser = await launchChromium(options.chromiumPath);
    const cspViolations: CspViolations = watchCspViolations(browser);
    const apiUrl = system.apiUrl;
    const opened = browser;
    const newPage = (role: Role) => signedInPage(opened, apiUrl, tokens[role], options.viewport);
    const page =
      options.role === null
        ? await (
            await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 900 } })
          ).newPage()
        : await newPage(options.role ?? "Admin");
    return {
      page,
      apiUrl,
      system,
      browser,
      tokens,
      examplesDir,
      newPage,
      takeCspViolations: () => cspViolations.take(),
      async api<T>(
        method: string,
        apiPath: string,
        body?: string,
        contentType?: string,
        role: Role = "Admin",
      ) {
        const response = await fetch(`${apiUrl}/api${apiPath}`, {
          method,
          headers: {
            Authorization: `Bearer ${tokens[role]}`,
            ...(contentType === undefined ? {} : { "Content-Type": contentType }),
          },
          body,
        });
        const text = await response.text();
        if (!response.ok) throw new Error(`${method} ${apiPath} answered ${response.status}: ${text}`);
        return (text === "" ? undefined : JSON.parse(text)) as T;
      },
      stop: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * Builds services/dashboard/dist when the sources changed. Test files run in parallel processes:
 * a lock directory (mkdir is atomic) lets one build while the others wait, then find it fresh.
 */
async function ensureDashboardBuilt(): Promise<void> {
  if (!(await isDashboardBuildStale())) return;
  const lock = path.join(dashboardRoot, "node_modules", ".dashboard-build-lock");
  await mkdir(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch {
      // A lock left by a test process that died mid-build (a build takes seconds) is taken over.
      const age = Date.now() - ((await stat(lock).catch(() => undefined))?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) await rmdir(lock).catch(() => undefined);
      // Another test process is building; check again shortly (waiting, not asserting on time).
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    if (await isDashboardBuildStale()) await buildDashboard();
  } finally {
    await rmdir(lock);
  }
}
