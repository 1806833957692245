import { z } from "zod";
import type { RunbookDefinition } from "../runbook/model.ts";

/**
 * The pre-flight check of a worker's target tenant (issue 27, point 4): the wire contract between
 * whoever asks (the admin API, for `matoolkit tenant check` and the dashboard) and the worker
 * process that holds the tenant's credential and runs it (services/worker/src/tenant/tenant-check).
 * Nothing here names a secret or a token: lines carry names of permissions, roles and domains only.
 */

/** A runbook step as the check reads it: the function and its (unresolved) params. */
export const tenantCheckStepSchema = z.object({
  /** `phase/step`, `init/step`, `rollback:<name>/step` or `on_member_removed/step`. */
  step: z.string().min(1),
  function: z.string().min(1),
  params: z.record(z.string(), z.unknown()),
});
export type TenantCheckStep = z.infer<typeof tenantCheckStepSchema>;

export const tenantCheckRequestSchema = z.object({
  /** Without a runbook: tokens and permissions for every standard function, no domains. */
  runbook: z
    .object({
      name: z.string().min(1),
      version: z.number().int().positive(),
      steps: z.array(tenantCheckStepSchema),
    })
    .optional(),
});
export type TenantCheckRequest = z.infer<typeof tenantCheckRequestSchema>;

export const tenantCheckStatuses = ["passed", "failed", "warning", "skipped"] as const;
export type TenantCheckStatus = (typeof tenantCheckStatuses)[number];

export const tenantCheckLineSchema = z
  .object({
    /** Stable id of the check, e.g. `graph.token`, `graph.permissions`, `exchange.role`. */
    check: z.string(),
    status: z.enum(tenantCheckStatuses),
    /** One sentence: what was found, and for a failure what to do. */
    detail: z.string(),
    /**
     * What is missing, named: permissions (`User.Invite.All`), a role, domains. Empty when passed.
     */
    missing: z.array(z.string()),
  })
  .meta({ id: "TenantCheckLine" });
export type TenantCheckLine = z.infer<typeof tenantCheckLineSchema>;

export const tenantCheckReportSchema = z
  .object({
    /** Which tenant and how (as the worker logs it), never a secret. */
    tenant: z.string(),
    runbook: z
      .object({ name: z.string(), version: z.number().int().positive() })
      .nullable()
      .meta({ description: "The runbook whose needs were checked; null: every standard function" }),
    /** The standard functions whose permissions were checked. */
    functions: z.array(z.string()),
    /** True when no line failed (warnings and skipped lines do not fail the check). */
    passed: z.boolean(),
    lines: z.array(tenantCheckLineSchema),
    checkedAt: z.string().meta({ description: "ISO 8601" }),
  })
  .meta({ id: "TenantCheckReport" });
export type TenantCheckReport = z.infer<typeof tenantCheckReportSchema>;

/** Runs the check where the tenant's credential lives (the worker's tenant clients). */
export type TenantChecker = (request: TenantCheckRequest, signal: AbortSignal) => Promise<TenantCheckReport>;

/** Every step a batch of the runbook may run, named `<phase>/<step>` (init, rollbacks, removal too). */
export function tenantCheckSteps(definition: RunbookDefinition): TenantCheckStep[] {
  const steps: TenantCheckStep[] = [];
  const add = (prefix: string, list: RunbookDefinition["init"]) => {
    for (const step of list)
      steps.push({ step: `${prefix}/${step.name}`, function: step.function, params: step.params });
  };
  add("init", definition.init);
  for (const phase of definition.phases) add(phase.name, phase.steps);
  add("on_member_removed", definition.onMemberRemoved);
  for (const [name, list] of Object.entries(definition.rollbacks)) add(`rollback:${name}`, list);
  return steps;
}
