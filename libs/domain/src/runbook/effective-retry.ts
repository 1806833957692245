import type { RetryConfig, StepDefinition } from "./model.ts";

/**
 * 000 "Retry Protocol": a step-level retry replaces the global one entirely (no merging), and
 * `max_retries: 0` opts out even when a global retry exists. Resolved once, when the execution row
 * is created. Undefined means "do not retry".
 */
export function resolveEffectiveRetry(
  step: Pick<StepDefinition, "retry">,
  global: RetryConfig | undefined,
): RetryConfig | undefined {
  const effective = step.retry ?? global;
  if (!effective || effective.maxRetries <= 0) return undefined;
  return { maxRetries: effective.maxRetries, intervalSeconds: effective.intervalSeconds };
}
