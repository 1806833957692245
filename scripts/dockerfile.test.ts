import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { repoRoot, workspaceDirs } from "./build/build.ts";
import { commands, isCommand } from "./build/commands.ts";
import { healthTarget } from "./build/healthcheck.mjs";

/**
 * No Docker engine runs here, so the image is checked by reading its build: the stages, what the
 * final stage ships and runs, and the compose files that start it. A workspace missing from the
 * manifests stage makes `npm ci` reject the lockfile in the image build: derived from the root
 * package.json's workspaces, so a new package fails this test until the Dockerfile copies it.
 */
interface Instruction {
  readonly keyword: string;
  readonly args: string;
}
interface Stage {
  readonly name: string | undefined;
  readonly from: string;
  readonly instructions: readonly Instruction[];
}

function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  // Comment lines go first (they may sit inside a continued instruction), then continuations.
  const logical = text
    .split("\n")
    .filter((line) => !line.trim().startsWith("#"))
    .join("\n")
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const args = new Map<string, string>();
  const stages: { name: string | undefined; from: string; instructions: Instruction[] }[] = [];
  for (const line of logical) {
    const [keyword = "", ...rest] = line.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(" ") };
    if (instruction.keyword === "FROM") {
      const [from = "", as, name] = rest;
      stages.push({ name: as?.toUpperCase() === "AS" ? name : undefined, from, instructions: [] });
    } else if (stages.length === 0 && instruction.keyword === "ARG") {
      const [key = "", value = ""] = instruction.args.split("=");
      args.set(key, value);
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return { args, stages };
}

const dockerfile = parseDockerfile(readFileSync(join(repoRoot, "Dockerfile"), "utf8"));
const stage = (name: string) => dockerfile.stages.find((candidate) => candidate.name === name);
const final = dockerfile.stages.at(-1);
const lines = (of: Stage | undefined) => (of?.instructions ?? []).map((i) => `${i.keyword} ${i.args}`);
const indexOf = (of: Stage | undefined, pattern: RegExp) => lines(of).findIndex((line) => pattern.test(line));

describe("Dockerfile", () => {
  it("builds in stages: manifests, build, deps, then the runtime image", () => {
    expect(dockerfile.stages.map((s) => s.name)).toEqual(["manifests", "build", "deps", undefined]);
  });

  it("runs a supported Node LTS line on a slim Debian base, the same in every Node stage", () => {
    const image = dockerfile.args.get("NODE_IMAGE") ?? "";
    const [, major] = /^node:(\d+)-bookworm-slim$/.exec(image) ?? [];
    // LTS lines are the even majors; 20 reached end of life in April 2026.
    expect(Number(major) % 2).toBe(0);
    expect(Number(major)).toBeGreaterThanOrEqual(22);
    expect(dockerfile.stages.slice(1).map((s) => s.from)).toEqual([
      "${NODE_IMAGE}",
      "${NODE_IMAGE}",
      "${NODE_IMAGE}",
    ]);
  });

  it("copies the package.json of every workspace into the manifests npm ci reads", () => {
    const manifests = lines(stage("manifests"));
    const missing = workspaceDirs()
      .map((dir) => relative(repoRoot, dir))
      .filter((workspace) => !manifests.includes(`COPY ${workspace}/package.json ${workspace}/`));
    expect(missing).toEqual([]);
    expect(manifests).toContain("COPY package.json package-lock.json ./");
  });

  it("copies the files the workspaces' bins point to, which npm links at install", () => {
    const binDirs = workspaceDirs().flatMap((dir) => {
      const { bin } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        bin?: Record<string, string>;
      };
      return Object.values(bin ?? {}).map((file) => relative(repoRoot, join(dir, file, "..")));
    });
    expect(binDirs.length).toBeGreaterThan(0);
    for (const dir of binDirs) expect(lines(stage("manifests"))).toContain(`COPY ${dir} ${dir}/`);
  });

  it("installs from those manifests in the build and deps stages, production only in deps", () => {
    for (const name of ["build", "deps"]) {
      const copied = indexOf(stage(name), /^COPY --from=manifests \/app \.\/$/);
      const installed = indexOf(stage(name), /^RUN npm ci /);
      expect(copied, name).toBeGreaterThanOrEqual(0);
      expect(installed, name).toBeGreaterThan(copied);
    }
    const depsInstall = lines(stage("deps")).find((line) => line.startsWith("RUN npm ci ")) ?? "";
    expect(depsInstall).toContain("--omit=dev");
    // Leaves out the embedded PostgreSQL binaries: the image runs against DATABASE_URL.
    expect(depsInstall).toContain("--omit=optional");
  });

  it("bundles the services, and builds the dashboard when it has a build script", () => {
    const build = lines(stage("build"));
    expect(build).toContain("RUN npm run build");
    const dashboard = JSON.parse(readFileSync(join(repoRoot, "services/dashboard/package.json"), "utf8")) as {
      scripts?: Record<string, string>;
    };
    const buildsDashboard = dashboard.scripts?.build !== undefined;
    expect(build.includes("RUN npm run build -w services/dashboard")).toBe(buildsDashboard);
    expect(
      lines(final).includes("COPY --from=build /app/services/dashboard/dist services/dashboard/dist"),
    ).toBe(buildsDashboard);
  });

  it("ships only the bundle, production node_modules and static files in the final stage", () => {
    const copies = lines(final).filter((line) => line.startsWith("COPY "));
    expect(copies).toEqual([
      "COPY --from=deps /app/node_modules node_modules",
      "COPY --from=build /app/package.json ./",
      "COPY --from=build /app/dist dist",
      "COPY --from=build /app/services/dashboard/dist services/dashboard/dist",
      "COPY examples examples",
    ]);
    // Nothing in the runtime image runs TypeScript or npm (removing /usr/local/bin/npx is fine).
    const runs = lines(final).filter((line) => /^(RUN|CMD|ENTRYPOINT|HEALTHCHECK) /.test(line));
    expect(
      runs.filter((line) => /(^|[\s"[&;])(tsx|npx)\b|\bnpm (ci|install|run|start)\b/.test(line)),
    ).toEqual([]);
    expect(runs.join("\n")).toContain("rm -f /usr/local/bin/npm /usr/local/bin/npx");
  });

  it("runs as node with tini, a /data volume node owns, and a node-based HEALTHCHECK", () => {
    const final_ = lines(final);
    const install = final_.find((line) => line.startsWith("RUN apt-get update")) ?? "";
    expect(install).toMatch(/apt-get install -y --no-install-recommends tini\b/);
    expect(install).toMatch(/mkdir -p \/data && chown node:node \/data/);
    expect(final_).toContain("USER node");
    expect(final_).toContain("VOLUME /data");
    expect(final_).toContain("EXPOSE 8080");
    expect(final_.find((line) => line.startsWith("ENV "))).toMatch(/NODE_ENV=production\b/);
    expect(final_.find((line) => line.startsWith("ENV "))).toMatch(/MATOOLKIT_DATA_DIR=\/data\b/);
    expect(final_.find((line) => line.startsWith("HEALTHCHECK "))).toMatch(
      /CMD \["node", "\/app\/dist\/healthcheck\.mjs"\]$/,
    );
    // The deployment contract: the command is the argument (or MATOOLKIT_SERVICE), all-in-one by default.
    expect(final_).toContain('ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/matoolkit.mjs"]');
    expect(final_).toContain('CMD ["all-in-one"]');
    expect(final_.indexOf("USER node")).toBeLessThan(
      final_.findIndex((line) => line.startsWith("ENTRYPOINT ")),
    );
  });

  it("keeps installed, built and local files out of the build context", () => {
    const ignored = readFileSync(join(repoRoot, ".dockerignore"), "utf8").split("\n");
    for (const entry of [".git", "**/node_modules", "**/dist", ".matoolkit", "coverage", ".env"]) {
      expect(ignored, entry).toContain(entry);
    }
  });
});

describe("the healthcheck of the image", () => {
  it("probes /healthz on the port of the service the container runs", () => {
    expect(healthTarget("admin-api", {})).toBe("http://127.0.0.1:8080/healthz");
    expect(healthTarget("all-in-one", { PORT: "9000", MATOOLKIT_API_HOST: "0.0.0.0" })).toBe(
      "http://127.0.0.1:9000/healthz",
    );
    const dapr = {
      MATOOLKIT_RUNTIME: "dapr",
      MATOOLKIT_DAPR_APP_PORT: "3001",
      MATOOLKIT_DAPR_APP_HOST: "0.0.0.0",
    };
    expect(healthTarget("orchestrator", dapr)).toBe("http://127.0.0.1:3001/healthz");
    expect(healthTarget("worker", { MATOOLKIT_RUNTIME: "aca" })).toBe("http://127.0.0.1:3000/healthz");
    expect(healthTarget("scheduler", { MATOOLKIT_BUS: "dapr" })).toBe("http://127.0.0.1:3000/healthz");
    expect(healthTarget("scheduler", { MATOOLKIT_METRICS_PORT: "9464" })).toBe(
      "http://127.0.0.1:9464/healthz",
    );
  });

  it("has nothing to probe for a service without an HTTP port or a one-shot command", () => {
    expect(healthTarget("worker", {})).toBe("none");
    expect(healthTarget("migrate", {})).toBe("none");
    expect(healthTarget("token", {})).toBe("none");
    expect(healthTarget("nonsense", {})).toBe("unknown");
  });

  it("knows every command of the entry", () => {
    expect(commands.filter((command) => healthTarget(command, {}) === "unknown")).toEqual([]);
  });
});

describe.each(["docker-compose.yml", "docker-compose.embedded.yml"])("%s", (file) => {
  interface ComposeService {
    image?: string;
    build?: string;
    command?: string[];
    restart?: string;
    depends_on?: Record<string, { condition: string }>;
  }
  const compose = parse(readFileSync(join(repoRoot, file), "utf8"), { merge: true }) as {
    services: Record<string, ComposeService>;
  };
  const fromImage = Object.entries(compose.services).filter(([, service]) => service.build === ".");

  it("starts every app container with an allowed command of the entry", () => {
    expect(fromImage.length).toBeGreaterThan(0);
    for (const [name, service] of fromImage) {
      expect(service.command?.length, name).toBe(1);
      expect(isCommand(service.command?.[0] ?? ""), `${name}: ${String(service.command)}`).toBe(true);
    }
  });

  it("migrates once in a one-shot service the others wait for", () => {
    const migrate = compose.services.migrate;
    expect(migrate?.command).toEqual(["migrate"]);
    expect(migrate?.restart).toBe("no");
    for (const [name, service] of fromImage) {
      if (name === "migrate") continue;
      // A service without SQL (the worker on Dapr) has no reason to wait for the schema.
      if (!("postgres" in (service.depends_on ?? {}))) continue;
      expect(service.depends_on?.migrate, name).toEqual({ condition: "service_completed_successfully" });
    }
  });

  it("mounts the data volume at the image's /data (owned by node)", () => {
    const admin = compose.services["admin-api"] as ComposeService & { volumes?: string[] };
    expect(admin.volumes).toContain("keys:/data");
  });
});

it("the dashboard path the image copies is where the dashboard builds", () => {
  // Vite's outDir (services/dashboard/vite.config.ts) is what the final stage copies.
  const config = join(repoRoot, "services/dashboard/vite.config.ts");
  expect(existsSync(config)).toBe(true);
  expect(readFileSync(config, "utf8")).toMatch(/outDir: "dist"/);
});
