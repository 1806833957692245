import express, { Router } from "express";
import { getBatchWithRunbook, listBatches, listEvents, listMembers, type Db } from "@matoolkit/db";
import { batchMachine, type BatchStatus } from "@matoolkit/domain";
import { principalOf, requireRole } from "../auth/index.ts";
import { advanceBatchCommand } from "../commands/advance-batch.ts";
import { cancelBatchCommand } from "../commands/cancel-batch.ts";
import { createManualBatchCommand } from "../commands/create-manual-batch.ts";
import { badRequest, notFound } from "../http/api-error.ts";
import { optionalString, optionalWholeNumber, pagination, positiveIntParam } from "../http/params.ts";
import { batchDetail, executionsWithRollbacks, phasesWithCounts } from "../read-models/batch-read-models.ts";

export function batchRoutes(db: Db): Router {
  const router = Router();

  // POST /api/batches?runbook=<name> with the CSV as the body (Content-Type: text/csv).
  router.post(
    "/",
    requireRole("Admin"),
    express.text({ type: ["text/csv", "text/plain"], limit: "50mb" }),
    async (req, res) => {
      const runbookName = optionalString(req, "runbook");
      if (runbookName === undefined)
        throw badRequest("query parameter 'runbook' (the runbook name) is required");
      if (typeof req.body !== "string" || req.body.trim() === "") {
        throw badRequest("send the members as a CSV body with Content-Type: text/csv");
      }
      const { batch, memberCount } = await createManualBatchCommand(db, {
        runbookName,
        csv: req.body,
        createdBy: principalOf(res).identity,
      });
      res.status(201).json({ ...batch, runbookName, memberCount });
    },
  );

  router.post("/:id/advance", requireRole("Admin"), async (req, res) => {
    res.status(202).json(await advanceBatchCommand(db, positiveIntParam(req, "id")));
  });

  router.post("/:id/cancel", requireRole("Admin"), async (req, res) => {
    res.json(await cancelBatchCommand(db, positiveIntParam(req, "id")));
  });

  router.get("/", async (req, res) => {
    const status = optionalString(req, "status");
    if (status !== undefined && !batchMachine.isState(status)) {
      throw badRequest(`'status' must be one of ${batchMachine.states.join(", ")}`);
    }
    const runbookName = optionalString(req, "runbook");
    res.json(
      await listBatches(db, { ...pagination(req), status: status as BatchStatus | undefined, runbookName }),
    );
  });

  router.get("/:id", async (req, res) => {
    const batch = await loadBatch(db, positiveIntParam(req, "id"));
    res.json(await batchDetail(db, batch));
  });

  router.get("/:id/members", async (req, res) => {
    const batch = await loadBatch(db, positiveIntParam(req, "id"));
    res.json(await listMembers(db, batch.id));
  });

  router.get("/:id/phases", async (req, res) => {
    const batch = await loadBatch(db, positiveIntParam(req, "id"));
    res.json(await phasesWithCounts(db, batch.id));
  });

  // Init executions first (they run before any phase), then the page of step executions.
  router.get("/:id/steps", async (req, res) => {
    const batch = await loadBatch(db, positiveIntParam(req, "id"));
    res.json(await executionsWithRollbacks(db, batch.id, pagination(req, { limit: 500, max: 5000 })));
  });

  // The batch's timeline, oldest first; a client pages (or polls) with the last id it has seen.
  router.get("/:id/events", async (req, res) => {
    const batch = await loadBatch(db, positiveIntParam(req, "id"));
    const afterId = optionalWholeNumber(req, "afterId");
    const limit = optionalWholeNumber(req, "limit") ?? 100;
    if (limit < 1 || limit > 1000) throw badRequest("'limit' must be between 1 and 1000");
    // One more than asked tells whether another page follows without a count query.
    const rows = await listEvents(db, batch.id, { afterId, limit: limit + 1 });
    const items = rows.slice(0, limit);
    res.json({ items, nextAfterId: rows.length > limit ? (items.at(-1)?.id ?? null) : null });
  });

  return router;
}

async function loadBatch(db: Db, id: number) {
  const batch = await getBatchWithRunbook(db, id);
  if (batch === undefined) throw notFound(`batch ${id} does not exist`);
  return batch;
}
