import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { daprRuntimePin, newestDapr, oldestDapr } from "./dapr-pins.ts";
import { repoRoot } from "./real-sidecar-fixture.ts";
import { renderDaprConfiguration, renderDaprResources } from "./render-resources.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "matoolkit-render-"));
  dirs.push(dir);
  return dir;
};

describe("rendering the shipped Dapr files for a harness", () => {
  it("changes only the named metadata of components/local and keeps every other field", () => {
    const target = tempDir();
    renderDaprResources({
      sourceDirs: [join(repoRoot, "components", "local")],
      targetDir: target,
      overrides: { "matoolkit-pubsub": { redisHost: "127.0.0.1:7000" } },
    });
    const shipped = parse(readFileSync(join(repoRoot, "components", "local", "pubsub.yaml"), "utf8"));
    const rendered = parse(readFileSync(join(target, "pubsub.yaml"), "utf8"));
    const value = (doc: typeof shipped, name: string) =>
      doc.spec.metadata.find((item: { name: string }) => item.name === name)?.value;
    expect(value(rendered, "redisHost")).toBe("127.0.0.1:7000");
    expect({ ...rendered, spec: { ...rendered.spec, metadata: undefined } }).toEqual({
      ...shipped,
      spec: { ...shipped.spec, metadata: undefined },
    });
    expect(value(rendered, "processingTimeout")).toBe(value(shipped, "processingTimeout"));
  });

  it("refuses an override for a component the files do not have, so no test silently uses shared services", () => {
    expect(() =>
      renderDaprResources({
        sourceDirs: [join(repoRoot, "components", "local")],
        targetDir: tempDir(),
        overrides: { "matoolkit-pubsb": { redisHost: "127.0.0.1:7000" } },
      }),
    ).toThrow(/no component named matoolkit-pubsb/);
  });

  it("gives the configuration a SQLite name resolution of its own (never mDNS) and keeps the rest", () => {
    const target = tempDir();
    const written = renderDaprConfiguration({
      source: join(repoRoot, "dapr", "config.yaml"),
      targetDir: target,
    });
    const rendered = parse(readFileSync(written, "utf8"));
    expect(rendered.spec.nameResolution).toEqual({
      component: "sqlite",
      configuration: { connectionString: join(target, "nameresolution.db") },
    });
    expect(rendered.spec.workflow).toEqual({
      maxConcurrentWorkflowInvocations: 50,
      maxConcurrentActivityInvocations: 50,
    });
  });
});

describe("pinned Dapr versions", () => {
  it("names the pins by version or role, and refuses others naming the choices", () => {
    expect(daprRuntimePin("newest")).toBe(newestDapr);
    expect(daprRuntimePin("v1.16.5")).toBe(oldestDapr);
    expect(() => daprRuntimePin("1.17.0")).toThrow(
      /Dapr 1.17.0 is not pinned here: choose one of 1.18.1, 1.16.5/,
    );
  });
});
