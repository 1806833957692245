import express, { Router } from "express";
import {
  getActiveRunbook,
  getRunbookVersion,
  listActiveRunbooks,
  listRunbookVersions,
  type Db,
  type Runbook,
} from "@matoolkit/db";
import type { MessageBus } from "@matoolkit/runtime";
import { requireRole } from "../auth/index.ts";
import { publishRunbookCommand, publishRunbookRequestSchema } from "../commands/publish-runbook.ts";
import { badRequest, notFound } from "../http/api-error.ts";
import { positiveIntParam } from "../http/params.ts";

const yamlTypes = ["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "text/plain"];

export function runbookRoutes(db: Db, bus: MessageBus): Router {
  const router = Router();

  // Body: JSON `{ yaml, name?, overdueBehavior?, rerunInit? }`, or the raw YAML with the
  // options in the query string (`curl --data-binary @runbook.yaml -H 'Content-Type: application/yaml'`).
  router.post(
    "/",
    requireRole("Admin"),
    express.json({ limit: "1mb" }),
    express.text({ type: yamlTypes, limit: "1mb" }),
    async (req, res) => {
      const raw =
        typeof req.body === "string"
          ? {
              yaml: req.body,
              name: req.query.name,
              overdueBehavior: req.query.overdueBehavior,
              rerunInit: queryBoolean(req.query.rerunInit),
            }
          : req.body;
      const request = publishRunbookRequestSchema.safeParse(raw ?? {});
      if (!request.success) {
        throw badRequest(
          "Send the runbook YAML as the body (Content-Type: application/yaml) or JSON { yaml, overdueBehavior?, rerunInit? }",
          {
            problems: request.error.issues.map((issue) => ({
              path: issue.path.join("."),
              message: issue.message,
            })),
          },
        );
      }
      const runbook = await publishRunbookCommand(db, bus, request.data);
      res.status(201).json(presentRunbook(runbook, false));
    },
  );

  router.get("/", async (_req, res) => {
    res.json((await listActiveRunbooks(db)).map((runbook) => presentRunbook(runbook, false)));
  });

  router.get("/:name", async (req, res) => {
    const runbook = await getActiveRunbook(db, req.params.name);
    if (runbook === undefined) throw notFound(`no active runbook named '${req.params.name}'`);
    res.json(presentRunbook(runbook, true));
  });

  router.get("/:name/versions", async (req, res) => {
    const versions = await listRunbookVersions(db, req.params.name);
    if (versions.length === 0) throw notFound(`no runbook named '${req.params.name}'`);
    res.json(versions.map((runbook) => presentRunbook(runbook, false)));
  });

  router.get("/:name/versions/:version", async (req, res) => {
    const runbook = await getRunbookVersion(db, req.params.name, positiveIntParam(req, "version"));
    if (runbook === undefined)
      throw notFound(`runbook '${req.params.name}' has no version ${req.params.version}`);
    res.json(presentRunbook(runbook, true));
  });

  return router;
}

function presentRunbook(runbook: Runbook, withYaml: boolean) {
  return {
    id: runbook.id,
    name: runbook.name,
    version: runbook.version,
    isActive: runbook.isActive,
    overdueBehavior: runbook.overdueBehavior,
    rerunInit: runbook.rerunInit,
    createdAt: runbook.createdAt,
    lastError: runbook.lastError,
    lastErrorAt: runbook.lastErrorAt,
    ...(withYaml ? { yamlContent: runbook.yamlContent } : {}),
  };
}

function queryBoolean(value: unknown): unknown {
  if (value === undefined) return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  return value;
}
