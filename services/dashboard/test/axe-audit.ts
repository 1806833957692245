import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

/** axe-core's WCAG 2.1 A/AA audit of a page, shared by the accessibility suite and page tests. */
const axeScript = readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly string[]; readonly failureSummary?: string }[];
}

/** The page's WCAG A/AA violations, each as "rule (impact): help — targets", for a readable failure. */
export async function auditPage(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, not added as an inline <script>: the dashboard's CSP
  // (script-src 'self') refuses inline scripts, as it should.
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(await axeScript);
  const violations = await page.evaluate(async (tags) => {
    const axe = (
      window as unknown as {
        axe: { run: (context: unknown, options: unknown) => Promise<{ violations: unknown }> };
      }
    ).axe;
    const result = await axe.run(document, {
      runOnly: { type: "tag", values: tags },
      resultTypes: ["violations"],
    });
    return result.violations as AxeViolation[];
  }, WCAG_TAGS);
  return violations.map(
    (violation) =>
      `${violation.id} (${violation.impact ?? "?"}): ${violation.help} — ` +
      violation.nodes.map((node) => node.target.join(" ")).join(", "),
  );
}
