// Types of healthcheck.mjs (plain JavaScript: it runs in the image, which has no TypeScript).
/** What the healthcheck probes for a command: a URL, "none" (nothing listens by design) or "unknown". */
export function healthTarget(command: string, env: Readonly<Record<string, string | undefined>>): string;
