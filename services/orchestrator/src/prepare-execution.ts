import { prepareStepExecution } from "@matoolkit/domain";

/**
 * Column values shared by new step and init executions. The resolution itself lives in
 * @matoolkit/domain (runbook/prepare-step.ts) so the admin API's dry-run plan
 * (POST /api/runbooks/{name}/plan) resolves templates with the very code that creates executions.
 */
export type { PreparedExecution } from "@matoolkit/domain";

export const prepareExecution = prepareStepExecution;
