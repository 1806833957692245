import { chromium, type Browser, type Page } from "playwright-core";

/** Chromium flags for a quiet, deterministic headless run (no GPU, no network side traffic). */
const chromiumArgs = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Debian's Chromium by default; Playwright gives every launch a fresh temporary profile. */
export function launchChromium(executablePath = "/usr/bin/chromium"): Promise<Browser> {
  return chromium.launch({ executablePath, args: chromiumArgs });
}

/**
 * A page in a browser context of its own (own session storage), signed in through the start
 * banner's link: `/#token=…`. Resolves once the header names the user.
 */
export async function signedInPage(
  browser: Browser,
  origin: string,
  token: string,
  viewport: { width: number; height: number } = { width: 1280, height: 900 },
): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(`${origin}/#token=${token}`);
  await page.getByTestId("user-name").waitFor();
  return page;
}
