import { parseOrExplain } from "@matoolkit/platform";
import { z } from "zod";
import { DEFAULT_PHASE_START_WINDOW } from "./handlers/phase-due.ts";

export const orchestratorConfigSchema = z.object({
  /** Longest sleep of a batch workflow before it re-reads SQL (a lost nudge strands nothing). */
  workflowRecheckSeconds: z.coerce.number().int().min(1).max(3600).default(60),
  /** Resume-from-SQL pass: every unfinished batch gets a running workflow; stuck steps are swept. */
  workflowReconcileSeconds: z.coerce.number().int().min(1).max(3600).default(60),
  concurrency: z.coerce.number().int().min(1).max(256).default(8),
  /** A phase's steps out with workers before its next members wait for results (issue 29). */
  phaseStartWindow: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_PHASE_START_WINDOW),
});
export type OrchestratorConfig = z.infer<typeof orchestratorConfigSchema>;

const names = {
  workflowRecheckSeconds: "MATOOLKIT_WORKFLOW_RECHECK_SECONDS",
  workflowReconcileSeconds: "MATOOLKIT_WORKFLOW_RECONCILE_SECONDS",
  concurrency: "MATOOLKIT_ORCHESTRATOR_CONCURRENCY",
  phaseStartWindow: "MATOOLKIT_PHASE_START_WINDOW",
} as const;

export function orchestratorConfigFromEnv(env: Record<string, string | undefined>): OrchestratorConfig {
  const raw = Object.fromEntries(Object.entries(names).map(([key, name]) => [key, env[name] || undefined]));
  return parseOrExplain(orchestratorConfigSchema, raw, names);
}
