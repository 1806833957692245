import { initTemplateFindings } from "./init-rules.ts";
import type { Finding, PathSegment } from "./problems.ts";
import { formatPath } from "./problems.ts";
import type { RawMapping, RawStepList } from "./raw.ts";
import { asList, isMapping, stepListsOf } from "./raw.ts";
import { parseDuration } from "./time.ts";

/** Flags the second and later uses of a name; the first stays valid. */
function duplicateNameFindings(items: readonly unknown[], listPath: PathSegment[], what: string): Finding[] {
  const firstIndex = new Map<string, number>();
  const findings: Finding[] = [];
  items.forEach((item, index) => {
    if (!isMapping(item) || typeof item.name !== "string") return;
    const first = firstIndex.get(item.name);
    if (first === undefined) firstIndex.set(item.name, index);
    else
      findings.push({
        path: [...listPath, index, "name"],
        message: `duplicate ${what} name "${item.name}" (already used at ${formatPath([...listPath, first])})`,
      });
  });
  return findings;
}

function onFailureFinding(step: RawMapping, path: PathSegment[], rollbacks: unknown): Finding[] {
  // A non-mapping `rollbacks` is reported by zod; its names are unknowable, so skip the reference check.
  if (typeof step.on_failure !== "string" || (rollbacks !== undefined && !isMapping(rollbacks))) return [];
  const defined = isMapping(rollbacks) ? Object.keys(rollbacks) : [];
  if (defined.includes(step.on_failure)) return [];
  const known = defined.length > 0 ? `defined rollbacks: ${defined.join(", ")}` : "no rollbacks are defined";
  return [
    {
      path: [...path, "on_failure"],
      message: `on_failure "${step.on_failure}" does not name a rollback; ${known}`,
    },
  ];
}

function tryDuration(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  try {
    return parseDuration(value);
  } catch {
    return undefined; // already reported by the schema
  }
}

function pollFindings(step: RawMapping, path: PathSegment[]): Finding[] {
  if (!isMapping(step.poll)) return [];
  const interval = tryDuration(step.poll.interval);
  const timeout = tryDuration(step.poll.timeout);
  if (interval === undefined || timeout === undefined || timeout >= interval) return [];
  return [
    {
      path: [...path, "poll", "timeout"],
      message: `poll timeout (${String(step.poll.timeout)}) is shorter than poll interval (${String(step.poll.interval)})`,
    },
  ];
}

/** `interval` may only be omitted for `max_retries: 0`, the explicit opt-out. */
export function retryFindings(retry: unknown, path: PathSegment[]): Finding[] {
  if (!isMapping(retry) || typeof retry.max_retries !== "number" || retry.max_retries <= 0) return [];
  if (retry.interval !== undefined) return [];
  return [
    {
      path: [...path, "interval"],
      message: 'missing required field "interval" (required when max_retries > 0)',
    },
  ];
}

function stepListFindings(list: RawStepList, rollbacks: unknown): Finding[] {
  const findings = duplicateNameFindings(list.steps, list.path, "step");
  list.steps.forEach((step, index) => {
    if (!isMapping(step)) return;
    const path = [...list.path, index];
    findings.push(...onFailureFinding(step, path, rollbacks), ...pollFindings(step, path));
    findings.push(...retryFindings(step.retry, [...path, "retry"]));
    if (list.kind === "init") findings.push(...initTemplateFindings(step, path));
  });
  return findings;
}

export function stepFindings(root: RawMapping): Finding[] {
  return [
    ...duplicateNameFindings(asList(root.phases), ["phases"], "phase"),
    ...retryFindings(root.retry, ["retry"]),
    ...stepListsOf(root).flatMap((list) => stepListFindings(list, root.rollbacks)),
  ];
}
