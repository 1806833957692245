import type { Browser, BrowserContext } from "playwright-core";

/**
 * Collects every Content-Security-Policy violation in any page of a browser: the dashboard must
 * work under its CSP (services/admin-api/src/http/security-headers.ts), so an inline script or
 * style attribute, an eval or a fetch to a host the policy does not name fails the browser tests
 * instead of silently breaking a feature in production.
 *
 * Browsers fire `securitypolicyviolation` on the document for each blocked action (CSP Level 3,
 * https://www.w3.org/TR/CSP3/#violation-events); an init script in every frame of every context
 * forwards it to the test process. Init scripts and bindings are installed through the DevTools
 * protocol, so the page's own CSP does not block them. Chromium also logs each violation to the
 * console; that listener is attached as the context is created, so nothing a page does before the
 * init script is in place goes unseen (a violation may then be listed twice).
 */
export interface CspViolations {
  /**
   * Each violation since the last call, as "directive blocked what (at file:line) on page", oldest
   * first; then forgets them, so each test answers for its own.
   */
  take(): Promise<string[]>;
}

const binding = "__matoolkitCspViolation";

export function watchCspViolations(browser: Browser): CspViolations {
  const list: string[] = [];
  // Every context, including those tests open themselves (browser.newPage, browser.newContext).
  browser.on("context", (context) => void watchContext(context, list));
  return {
    async take() {
      // Browsers queue the violation event as a task: one task later in every open page, any
      // violation of what the test just did has been forwarded (bindings answer in order).
      const pages = browser.contexts().flatMap((context) => context.pages());
      await Promise.all(
        pages.map((page) =>
          page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0))).catch(() => undefined),
        ),
      );
      return list.splice(0);
    },
  };
}

async function watchContext(context: BrowserContext, list: string[]): Promise<void> {
  context.on("console", (message) => {
    if (message.type() === "error" && message.text().includes("Content Security Policy")) {
      list.push(`console: ${message.text()} on ${message.page()?.url() ?? "?"}`);
    }
  });
  await context.exposeBinding(binding, ({ page }, violation: string) => {
    list.push(`${violation} on ${page.url()}`);
  });
  await context.addInitScript((name: string) => {
    document.addEventListener("securitypolicyviolation", (event) => {
      const report = (window as unknown as Record<string, (text: string) => void>)[name];
      report?.(
        `${event.effectiveDirective} blocked ${event.blockedURI || "(inline)"} ` +
          `(at ${event.sourceFile || "?"}:${event.lineNumber})`,
      );
    });
  }, binding);
}
