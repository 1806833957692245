import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/**
 * Relative links between the repository's Markdown files: every `[text](target)`, image and
 * reference definition outside code must name a file or directory that exists, and a `#anchor`
 * into a Markdown file must name one of its headings (GitHub's slugs), so a page that moves or a
 * heading that is renamed cannot leave a dead link behind.
 */

/** The documentation the link check covers, as globs' roots: files, or directories walked for *.md. */
export const documentationRoots = [
  "README.md",
  "ARCHITECTURE.md",
  "SECURITY.md",
  "docs",
  "components",
  "deploy",
  "dapr",
  "libs",
  "services",
  "examples",
] as const;

export interface DocLink {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

export interface BrokenLink extends DocLink {
  readonly reason: string;
}

/** The Markdown files under `roots` (relative to `repoRoot`), node_modules skipped, sorted. */
export function markdownFiles(repoRoot: string, roots: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (path: string): void => {
    const absolute = join(repoRoot, path);
    if (!existsSync(absolute)) return;
    if (statSync(absolute).isDirectory()) {
      for (const entry of readdirSync(absolute)) {
        if (entry === "node_modules" || entry.startsWith(".")) continue;
        walk(join(path, entry));
      }
    } else if (path.endsWith(".md")) {
      found.push(path.split(sep).join("/"));
    }
  };
  roots.forEach(walk);
  return [...new Set(found)].sort();
}

/**
 * GitHub's heading slug (github-slugger): the heading's text lowercased, every character that is
 * not a letter, digit, mark, connector (`_`), space or hyphen removed, each space made a hyphen.
 * Repeats of a slug in one file get `-1`, `-2`, … (see `anchorsOf`).
 */
export function githubSlug(headingText: string): string {
  return headingText
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** What a heading's Markdown renders as text: link and image text kept, code ticks, emphasis and HTML tags dropped. */
function renderedText(markdown: string): string {
  return markdown
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/`/g, "")
    .replace(/\*+/g, "")
    .replace(/(^|\s)_+|_+(\s|$)/g, "$1$2")
    .trim();
}

/** Each line of `text` with whether it sits inside a fenced code block (fence lines count as inside). */
function linesOutsideCode(text: string): { readonly line: string; readonly number: number }[] {
  const lines = text.split("\n");
  const outside: { line: string; number: number }[] = [];
  let fence: string | undefined;
  lines.forEach((line, index) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (opening && opening[1]!.startsWith(fence)) fence = undefined;
      return;
    }
    if (opening) {
      fence = opening[1]!;
      return;
    }
    outside.push({ line, number: index + 1 });
  });
  return outside;
}

/** The anchors a Markdown file offers: its headings' slugs (with GitHub's -1, -2 for repeats) and HTML ids/names. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const addHeading = (text: string): void => {
    const slug = githubSlug(renderedText(text));
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  };
  const lines = linesOutsideCode(markdown);
  lines.forEach(({ line }, index) => {
    const atx = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (atx) addHeading(atx[1]!);
    const previous = lines[index - 1];
    if (/^ {0,3}(=+|-+)\s*$/.test(line) && previous && previous.number === lines[index]!.number - 1) {
      const text = previous.line.trim();
      if (text !== "" && !/^([-*+|>#]|\d+\.)/.test(text)) addHeading(text);
    }
    for (const match of line.matchAll(/<a\s+[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  });
  return anchors;
}

/** The relative links of one Markdown file (web and mail links, and links inside code, are not returned). */
export function relativeLinks(file: string, markdown: string): DocLink[] {
  const links: DocLink[] = [];
  for (const { line, number } of linesOutsideCode(markdown)) {
    const prose = line.replace(/(`+)[^`]*?\1/g, "");
    const targets = [
      ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!),
      ...[...prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/g)].map((match) => match[1]!),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      links.push({ file, line: number, target });
    }
  }
  return links;
}

/** Every relative link of `files` that does not resolve, with why. */
export function brokenLinks(repoRoot: string, files: readonly string[]): BrokenLink[] {
  const root = resolve(repoRoot);
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = (path: string): Set<string> => {
    let anchors = anchorCache.get(path);
    if (!anchors) {
      anchors = anchorsOf(readFileSync(path, "utf8"));
      anchorCache.set(path, anchors);
    }
    return anchors;
  };
  const broken: BrokenLink[] = [];
  for (const file of files) {
    const source = join(root, file);
    for (const link of relativeLinks(file, readFileSync(source, "utf8"))) {
      const hashAt = link.target.indexOf("#");
      const pathPart = hashAt === -1 ? link.target : link.target.slice(0, hashAt);
      const anchor = hashAt === -1 ? undefined : decodeURIComponent(link.target.slice(hashAt + 1));
      const decodedPath = decodeURIComponent(pathPart);
      const target =
        decodedPath === ""
          ? source
          : decodedPath.startsWith("/")
            ? join(root, decodedPath)
            : resolve(dirname(source), decodedPath);
      const inside = relative(root, target);
      if (inside.startsWith("..")) {
        broken.push({ ...link, reason: "points outside the repository" });
      } else if (!existsSync(target)) {
        broken.push({ ...link, reason: `no file ${inside.split(sep).join("/")}` });
      } else if (anchor !== undefined && target.endsWith(".md") && !anchorsIn(target).has(anchor)) {
        broken.push({ ...link, reason: `no heading #${anchor} in ${inside.split(sep).join("/")}` });
      }
    }
  }
  return broken;
}

export function describeBrokenLinks(broken: readonly BrokenLink[]): string {
  return broken.map((link) => `${link.file}:${link.line} → ${link.target} (${link.reason})`).join("\n");
}
