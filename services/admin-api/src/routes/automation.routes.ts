import express, { Router, type Request } from "express";
import { DataSourceError, type DataSourceClient } from "@matoolkit/datasources";
import { getActiveRunbook, getAutomationSettings, setAutomationEnabled, type Db } from "@matoolkit/db";
import { previewRunbookQuery, SourceRowError } from "@matoolkit/scheduler";
import { z } from "zod";
import { principalOf, requireRole } from "../auth/index.ts";
import { ApiError, badRequest, notFound } from "../http/api-error.ts";
import { optionalWholeNumber } from "../http/params.ts";

// Strict: `{ "automationEnabled": true }` or `{ "enable": true }` must not silently do nothing.
export const automationRequestSchema = z.strictObject({ enabled: z.boolean() });

const PREVIEW_LIMIT = { default: 20, max: 500 } as const;

/**
 * 000 "Admin API Internals": automation status (any caller), the switch and the query preview
 * (Admin). The switch records who flipped it and when (000 "Audit Trail").
 */
export function automationRoutes(db: Db, dataSources: DataSourceClient): Router {
  const router = Router();

  router.get("/:name/automation", async (req, res) => {
    const name = await existingRunbookName(db, req);
    res.json(presentSettings(name, await getAutomationSettings(db, name)));
  });

  router.put("/:name/automation", requireRole("Admin"), express.json({ limit: "16kb" }), async (req, res) => {
    const request = automationRequestSchema.safeParse(req.body ?? {});
    if (!request.success) throw badRequest('Send JSON { "enabled": true } or { "enabled": false }');
    const name = await existingRunbookName(db, req);
    const settings = await setAutomationEnabled(db, {
      runbookName: name,
      enabled: request.data.enabled,
      actor: principalOf(res).identity,
      at: new Date(),
    });
    res.json(presentSettings(name, settings));
  });

  // POST: it runs a query against the source (not a cacheable read), and it is Admin-only
  // because it shows members' data.
  router.post("/:name/query/preview", requireRole("Admin"), async (req, res) => {
    const limit = optionalWholeNumber(req, "limit") ?? PREVIEW_LIMIT.default;
    if (limit < 1 || limit > PREVIEW_LIMIT.max)
      throw badRequest(`'limit' must be between 1 and ${PREVIEW_LIMIT.max}`);
    const name = nameParam(req);
    const preview = await previewRunbookQuery({ db, dataSources }, name, { limit, now: new Date() }).catch(
      (error: unknown) => {
        throw previewError(error);
      },
    );
    if (preview === undefined) throw notFound(`no active runbook named '${name}'`);
    res.json(preview);
  });

  return router;
}

function nameParam(req: Request): string {
  const name = req.params.name;
  if (typeof name !== "string" || name === "") throw badRequest("the runbook name is missing from the path");
  return name;
}

async function existingRunbookName(db: Db, req: Request): Promise<string> {
  const name = nameParam(req);
  if ((await getActiveRunbook(db, name)) === undefined) throw notFound(`no active runbook named '${name}'`);
  return name;
}

/** Never configured = disabled (000's column default), with nobody recorded. */
function presentSettings(runbookName: string, settings: Awaited<ReturnType<typeof getAutomationSettings>>) {
  return {
    runbookName,
    automationEnabled: settings?.automationEnabled ?? false,
    enabledAt: settings?.enabledAt ?? null,
    enabledBy: settings?.enabledBy ?? null,
    disabledAt: settings?.disabledAt ?? null,
    disabledBy: settings?.disabledBy ?? null,
  };
}

/** A source that fails is the source's problem (502), a row the scheduler cannot use the data's (422). */
function previewError(error: unknown): unknown {
  if (error instanceof DataSourceError) return new ApiError(502, "datasource.failed", error.message);
  if (error instanceof SourceRowError) return new ApiError(422, "member_data.invalid", error.message);
  return error;
}
