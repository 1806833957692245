import { listOpenAlerts, raiseAlert, resolveAlert, type AlertFinding, type Db } from "@matoolkit/db";
import { recordAlertChange } from "@matoolkit/commands";
import { alertDefinitions, type AlertDefinition } from "@matoolkit/domain";
import type { Logger } from "@matoolkit/runtime";
import { alertFinders } from "./alert-findings.ts";

export interface AlertEvaluation {
  readonly raised: number;
  readonly resolved: number;
}

/**
 * One pass of the alert evaluator (issue 31), on the scheduler's `alerts-evaluate` timer (once
 * across processes): per condition, what its query finds now against the condition's open alerts.
 * A new subject is raised, an open alert whose subject is no longer found is resolved, an open one
 * still found is left alone (re-evaluation raises nothing twice). Each raise and resolve is its
 * own transaction with its events row and webhook notification; the guarded statements make a
 * concurrent evaluator's copy a no-op. A condition whose query fails is skipped (and logged):
 * its open alerts stay open rather than being resolved on missing information.
 */
export async function evaluateAlerts(deps: { db: Db; logger: Logger }, now: Date): Promise<AlertEvaluation> {
  let raised = 0;
  let resolved = 0;
  for (const definition of alertDefinitions) {
    const find = alertFinders[definition.id];
    if (find === undefined) continue;
    let findings: AlertFinding[];
    try {
      findings = await find(deps.db, now);
    } catch (error) {
      deps.logger.error(
        { condition: definition.id, err: (error as Error).name },
        "alert condition not evaluated",
      );
      continue;
    }
    const result = await reconcile(deps, definition, findings, now);
    raised += result.raised;
    resolved += result.resolved;
  }
  return { raised, resolved };
}

async function reconcile(
  deps: { db: Db; logger: Logger },
  definition: AlertDefinition,
  findings: readonly AlertFinding[],
  now: Date,
): Promise<AlertEvaluation> {
  const open = await listOpenAlerts(deps.db, definition.id);
  const openSubjects = new Set(open.map((alert) => alert.subject));
  const foundSubjects = new Set(findings.map((finding) => finding.subject));
  let raised = 0;
  let resolved = 0;
  for (const finding of findings) {
    if (openSubjects.has(finding.subject)) continue;
    const alert = await deps.db.transaction().execute(async (trx) => {
      const row = await raiseAlert(
        trx,
        { conditionId: definition.id, severity: definition.severity, ...finding },
        now,
      );
      if (row !== undefined) await recordAlertChange(trx, row, "alert.raised", now);
      return row;
    });
    if (alert === undefined) continue;
    raised += 1;
    // The line Azure Monitor's log alerts match (definitions.ts raisedInLogs): ids and counts only.
    deps.logger.warn(
      { condition: definition.id, severity: definition.severity, alertId: alert.id, subject: alert.subject },
      "alert raised",
    );
  }
  for (const alert of open) {
    if (foundSubjects.has(alert.subject)) continue;
    const done = await deps.db.transaction().execute(async (trx) => {
      const row = await resolveAlert(trx, alert.id, now);
      if (row !== undefined) await recordAlertChange(trx, row, "alert.resolved", now);
      return row;
    });
    if (done === undefined) continue;
    resolved += 1;
    deps.logger.info(
      { condition: definition.id, alertId: alert.id, subject: alert.subject },
      "alert resolved",
    );
  }
  return { raised, resolved };
}
