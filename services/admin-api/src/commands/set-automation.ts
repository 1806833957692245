import {
  getActiveRunbook,
  lockAutomationSettings,
  recordAuditEvent,
  setAutomationEnabled,
  type AutomationSettings,
  type Db,
} from "@matoolkit/db";
import { notFound } from "../http/api-error.ts";

/**
 * PUT /api/runbooks/{name}/automation: the switch (who and when on the settings row, 000 "Audit
 * Trail") and, when it actually flips, an audit event (entity automation, entity_id = the active
 * version's id, `disabled` → `enabled` or back) naming the operator, in one transaction. Switches
 * of one runbook take turns (advisory lock), so each event's from/to is what really changed.
 * Repeating the current setting writes no event: nothing changed.
 */
export async function setAutomationCommand(
  db: Db,
  request: { readonly runbookName: string; readonly enabled: boolean; readonly actor: string },
): Promise<AutomationSettings> {
  return db.transaction().execute(async (trx) => {
    const runbook = await getActiveRunbook(trx, request.runbookName);
    if (runbook === undefined) throw notFound(`no active runbook named '${request.runbookName}'`);
    const before = await lockAutomationSettings(trx, request.runbookName);
    const settings = await setAutomationEnabled(trx, {
      runbookName: request.runbookName,
      enabled: request.enabled,
      actor: request.actor,
      at: new Date(),
    });
    const wasEnabled = before?.automationEnabled ?? false;
    if (wasEnabled !== request.enabled) {
      await recordAuditEvent(trx, {
        batchId: null,
        entity: "automation",
        entityId: runbook.id,
        fromStatus: stateName(wasEnabled),
        toStatus: stateName(request.enabled),
        reason: `automation of ${request.runbookName} ${request.enabled ? "enabled" : "disabled"}`,
        actor: request.actor,
      });
    }
    return settings;
  });
}

function stateName(enabled: boolean): "enabled" | "disabled" {
  return enabled ? "enabled" : "disabled";
}
