import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  anchorsOf,
  brokenLinks,
  describeBrokenLinks,
  documentationRoots,
  githubSlug,
  markdownFiles,
} from "./doc-links.ts";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

describe("the repository's documentation", () => {
  it("has no relative link to a missing file or heading (README, ARCHITECTURE, SECURITY, docs, components, deploy, dapr, libs, services, examples)", () => {
    const files = markdownFiles(repoRoot, documentationRoots);
    expect(files).toEqual(expect.arrayContaining(["README.md", "ARCHITECTURE.md", "docs/cli.md"]));
    const broken = brokenLinks(repoRoot, files);
    expect(describeBrokenLinks(broken), "broken links (file:line → target)").toBe("");
  });

  it("keeps README.md to a screen of orientation: at most 250 lines, the manual lives in docs/", () => {
    const lines = readFileSync(join(repoRoot, "README.md"), "utf8").trimEnd().split("\n").length;
    expect(lines).toBeLessThanOrEqual(250);
  });
});

describe("githubSlug", () => {
  it("lowercases, drops punctuation and turns spaces into hyphens, as GitHub's anchors do", () => {
    expect(githubSlug("What was run on real Dapr, and what is only reviewed")).toBe(
      "what-was-run-on-real-dapr-and-what-is-only-reviewed",
    );
    expect(githubSlug("Entra ID (app registration)")).toBe("entra-id-app-registration");
    expect(githubSlug("4. Passwordless PostgreSQL (DATABASE_AUTH=entra)")).toBe(
      "4-passwordless-postgresql-database_authentra",
    );
    expect(githubSlug("Metrics: GET /metrics (Prometheus text)")).toBe("metrics-get-metrics-prometheus-text");
  });
});

describe("anchorsOf", () => {
  it("gives repeated headings GitHub's -1, -2 suffixes and ignores headings inside code blocks", () => {
    const anchors = anchorsOf(
      "# Setup\n\n## `npm start`: **embedded** mode\n\n```sh\n# not a heading\n```\n\n## Setup\n\nTitle\n=====\n",
    );
    expect([...anchors].sort()).toEqual(["npm-start-embedded-mode", "setup", "setup-1", "title"]);
  });
});

describe("brokenLinks", () => {
  const directory = mkdtempSync(join(tmpdir(), "doc-links-"));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(directory, path)), { recursive: true });
    writeFileSync(join(directory, path), text);
  };

  it("lists each missing file, missing heading and escape from the repository as file:line → target", () => {
    write(
      "README.md",
      [
        "# Project",
        "",
        "See [the CLI](docs/cli.md#exit-codes), [setup](docs/cli.md#setup) and [gone](docs/gone.md).",
        "Up [here](#project), [nowhere](#nowhere), [outside](../elsewhere.md), [web](https://example.com/x.md).",
        "`[in code](docs/missing.md)` and",
        "```md",
        "[in a fence](docs/missing.md)",
        "```",
        "[ref]: docs/also-gone.md",
      ].join("\n"),
    );
    write("docs/cli.md", "# CLI\n\n## Exit codes\n\nBack to the [README](../README.md#project).\n");

    const broken = brokenLinks(directory, markdownFiles(directory, ["README.md", "docs"]));

    expect(describeBrokenLinks(broken).split("\n")).toEqual([
      "README.md:3 → docs/cli.md#setup (no heading #setup in docs/cli.md)",
      "README.md:3 → docs/gone.md (no file docs/gone.md)",
      "README.md:4 → #nowhere (no heading #nowhere in README.md)",
      "README.md:4 → ../elsewhere.md (points outside the repository)",
      "README.md:9 → docs/also-gone.md (no file docs/also-gone.md)",
    ]);
  });
});
