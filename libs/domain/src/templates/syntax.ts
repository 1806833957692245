/**
 * `{{Name}}` placeholders. The name is whatever sits between the braces, trimmed — it is only ever
 * looked up, never evaluated, so `{{1+1}}` is simply a variable called "1+1". Empty braces are left as text.
 */
const NAME = String.raw`\s*([^{}\s](?:[^{}]*[^{}\s])?)\s*`;

const TEMPLATE = new RegExp(String.raw`\{\{${NAME}\}\}`, "g");

/**
 * For String.prototype.replace and matchAll only: both start from index 0 whatever `lastIndex`
 * says (replace resets it, matchAll clones the RegExp), so one compiled pattern serves every call.
 * Compiling it per call was a fifth of a large dry-run plan's CPU. Never use it with `exec`/`test`.
 */
export function templatePattern(): RegExp {
  return TEMPLATE;
}

const WHOLE_TEMPLATE = new RegExp(String.raw`^\{\{${NAME}\}\}$`);

/** The variable name when `text` is exactly one template (`"{{Groups}}"`), else undefined. */
export function soleTemplateName(text: string): string | undefined {
  return WHOLE_TEMPLATE.exec(text)?.[1];
}

function collect(value: unknown, into: Set<string>): void {
  if (typeof value === "string") {
    for (const match of value.matchAll(templatePattern())) into.add(match[1] as string);
  } else if (Array.isArray(value)) {
    for (const item of value) collect(item, into);
  } else if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) collect(item, into);
  }
}

/** Every variable referenced in a string or (recursively) in a params map/list; sorted, unique. */
export function templateVariablesIn(
  value: string | Readonly<Record<string, unknown>> | readonly unknown[],
): string[] {
  const names = new Set<string>();
  collect(value, names);
  return [...names].sort();
}
