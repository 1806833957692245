/**
 * deploy/aca/hooks/migrate.sh, run as azd runs it, with `az`, `docker` and `azd` replaced by
 * scripts that record their arguments and answer as Azure would (the answers' shapes: `az
 * containerapp job start --query name` prints the execution's name, `job execution show --query
 * properties.status` one of Running/Succeeded/Failed, `containerapp list --query …name -o tsv`
 * one name per line). What is checked is the order a first `azd up` needs: the release's
 * migrations before any app gets it, and the apps configured for that image (Dapr, probes) before
 * azd's deploy changes their image.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = join(import.meta.dirname, "..", "..");
const script = join(root, "deploy/aca/hooks/migrate.sh");
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A directory of fake `az`, `docker`, `azd` that append `<tool> <args>` to calls.log. */
function fakeTools(answers: { jobStatus: string; placeholderApps: string[] }): { bin: string; log: string } {
  const bin = mkdtempSync(join(tmpdir(), "matoolkit-hooks-"));
  dirs.push(bin);
  const log = join(bin, "calls.log");
  const tool = (name: string, body: string) => {
    const path = join(bin, name);
    writeFileSync(path, `#!/bin/sh\necho "${name} $*" >> "${log}"\n${body}\n`);
    chmodSync(path, 0o755);
  };
  tool(
    "az",
    `case "$*" in
  "containerapp job start"*) echo "caj-exec-1" ;;
  "containerapp job execution show"*) echo "${answers.jobStatus}" ;;
  "containerapp list"*) printf '%b' "${answers.placeholderApps.map((app) => `${app}\\n`).join("")}" ;;
esac`,
  );
  tool("docker", "");
  tool("azd", "");
  return { bin, log };
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly calls: string[];
}

function runHook(mode: string, tools: { bin: string; log: string }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      "sh",
      [script, mode],
      {
        cwd: root,
        env: {
          PATH: `${tools.bin}:${process.env.PATH ?? ""}`,
          // What azd hands a hook: its environment's values, the template's outputs among them.
          AZURE_ENV_NAME: "mtk-dev",
          AZURE_RESOURCE_GROUP: "rg-mtk-dev",
          AZURE_CONTAINER_REGISTRY_ENDPOINT: "crmtkdev.azurecr.io",
          AZURE_CONTAINER_REGISTRY_NAME: "crmtkdev",
          MIGRATE_JOB_NAME: "caj-mtk-dev-migrate",
          DB_ROLES_JOB_NAME: "caj-mtk-dev-db-roles",
          AZURE_PLACEHOLDER_IMAGE: "mcr.microsoft.com/k8se/quickstart:latest",
        },
      },
      (error, stdout, stderr) => {
        let calls: string[] = [];
        try {
          calls = readFileSync(tools.log, "utf8").trim().split("\n").filter(Boolean);
        } catch {
          calls = [];
        }
        resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr, calls });
      },
    );
  });
}

const releaseImage = /^crmtkdev\.azurecr\.io\/matoolkit\/release-mtk-dev:predeploy-\d{14}$/;

describe("hooks/migrate.sh predeploy (before azd deploys any app)", () => {
  it("first deploy: builds and pushes the release, migrates with it, then provisions the placeholder apps with it", async () => {
    const tools = fakeTools({
      jobStatus: "Succeeded",
      placeholderApps: ["ca-mtk-dev-admin-api", "ca-mtk-dev-worker"],
    });
    const run = await runHook("predeploy", tools);
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    const image = /release image (\S+)/.exec(run.stdout)?.[1] ?? "";
    expect(image).toMatch(releaseImage);
    expect(run.calls).toEqual([
      "az acr login --name crmtkdev",
      `docker build --platform linux/amd64 -f Dockerfile -t ${image} .`,
      `docker push ${image}`,
      `az containerapp job update -g rg-mtk-dev -n caj-mtk-dev-migrate --image ${image} -o none`,
      "az containerapp job start -g rg-mtk-dev -n caj-mtk-dev-migrate --query name -o tsv",
      "az containerapp job execution show -g rg-mtk-dev -n caj-mtk-dev-migrate --job-execution-name caj-exec-1 --query properties.status -o tsv",
      "az containerapp list -g rg-mtk-dev --query [?properties.template.containers[0].image=='mcr.microsoft.com/k8se/quickstart:latest'].name -o tsv",
      `azd env set SERVICE_ADMIN_API_IMAGE_NAME ${image} -e mtk-dev`,
      `azd env set SERVICE_ORCHESTRATOR_IMAGE_NAME ${image} -e mtk-dev`,
      `azd env set SERVICE_SCHEDULER_IMAGE_NAME ${image} -e mtk-dev`,
      `azd env set SERVICE_WORKER_IMAGE_NAME ${image} -e mtk-dev`,
      "azd provision --no-prompt -e mtk-dev",
    ]);
    expect(run.stdout).toContain(
      `first deploy, still on the placeholder: ca-mtk-dev-admin-api ca-mtk-dev-worker; provisioning the apps with ${image}`,
    );
  });

  it("later deploys: migrates, and leaves the apps to azd's deploy", async () => {
    const tools = fakeTools({ jobStatus: "Succeeded", placeholderApps: [] });
    const run = await runHook("predeploy", tools);
    expect(run.code).toBe(0);
    expect(run.calls.filter((call) => call.startsWith("az containerapp job start"))).toHaveLength(1);
    expect(run.calls.filter((call) => call.startsWith("azd "))).toEqual([]);
  });

  it("stops azd (non-zero) when the migration fails, before any app is touched, naming the logs command", async () => {
    const tools = fakeTools({ jobStatus: "Failed", placeholderApps: ["ca-mtk-dev-admin-api"] });
    const run = await runHook("predeploy", tools);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(
      "caj-mtk-dev-migrate: Failed; logs: az containerapp job logs show -g rg-mtk-dev -n caj-mtk-dev-migrate --execution caj-exec-1 --container migrate",
    );
    expect(run.calls.some((call) => call.startsWith("azd ") || call.startsWith("az containerapp list"))).toBe(
      false,
    );
  });
});

describe("hooks/migrate.sh postprovision", () => {
  it("runs the db-roles job and waits for it", async () => {
    const tools = fakeTools({ jobStatus: "Succeeded", placeholderApps: [] });
    const run = await runHook("postprovision", tools);
    expect(run.code).toBe(0);
    expect(run.calls).toEqual([
      "az containerapp job start -g rg-mtk-dev -n caj-mtk-dev-db-roles --query name -o tsv",
      "az containerapp job execution show -g rg-mtk-dev -n caj-mtk-dev-db-roles --job-execution-name caj-exec-1 --query properties.status -o tsv",
    ]);
  });

  it("refuses an unknown mode with exit 2", async () => {
    const run = await runHook("postdeploy", fakeTools({ jobStatus: "Succeeded", placeholderApps: [] }));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("usage: migrate.sh postprovision|predeploy");
  });
});

describe("hooks/migrate.sh against azure.yaml", () => {
  it("builds as azure.yaml's services do, and records an image for each of them", () => {
    const yaml = parse(readFileSync(join(root, "azure.yaml"), "utf8")) as {
      services: Record<string, { docker: { path: string; context: string } }>;
    };
    const text = readFileSync(script, "utf8");
    const listed = /^services="([^"]*)"$/m.exec(text)?.[1]?.split(" ");
    expect(listed?.sort()).toEqual(Object.keys(yaml.services).sort());
    for (const service of Object.values(yaml.services)) {
      expect(text).toContain(
        `docker build --platform linux/amd64 -f ${service.docker.path} -t "$image" ${service.docker.context}`,
      );
    }
  });
});
