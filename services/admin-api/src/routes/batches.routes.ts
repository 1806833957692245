import express, { Router } from "express";
import {
  getBatchWithRunbook,
  listBatches,
  listInitsByBatch,
  listMembers,
  listPhases,
  listStepsByBatch,
  type Db,
} from "@matoolkit/db";
import { batchMachine, type BatchStatus } from "@matoolkit/domain";
import { principalOf, requireRole } from "../auth/index.ts";
import { advanceBatchCommand } from "../commands/advance-batch.ts";
import { createManualBatchCommand } from "../commands/create-manual-batch.ts";
import { badRequest, notFound } from "../http/api-error.ts";
import { optionalString, pagination, positiveIntParam } from "../http/params.ts";
import { countBy } from "./count-by.ts";

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
    const [members, phases] = await Promise.all([listMembers(db, batch.id), listPhases(db, batch.id)]);
    const { yamlContent: _yaml, ...rest } = batch;
    res.json({
      ...rest,
      memberCounts: countBy(members, (member) => member.status),
      phases: phases.map((phase) => ({ id: phase.id, phaseName: phase.phaseName, status: phase.status })),
    });
  });

  router.get("/:id/members", async (req, res) => {
    const batch = await loadBatch(db, positiveIntParam(req, "id"));
    res.json(await listMembers(db, batch.id));
  });

  router.get("/:id/phases", async (req, res) => {
    const batch = await loadBatch(db, positiveIntParam(req, "id"));
    res.json(await listPhases(db, batch.id));
  });

  // Init executions first (they run before any phase), then the page of step executions.
  router.get("/:id/steps", async (req, res) => {
    const batch = await loadBatch(db, positiveIntParam(req, "id"));
    const [init, steps] = await Promise.all([
      listInitsByBatch(db, batch.id),
      listStepsByBatch(db, batch.id, pagination(req, { limit: 500, max: 5000 })),
    ]);
    res.json({ init, steps });
  });

  return router;
}

async function loadBatch(db: Db, id: number) {
  const batch = await getBatchWithRunbook(db, id);
  if (batch === undefined) throw notFound(`batch ${id} does not exist`);
  return batch;
}
