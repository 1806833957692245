/**
 * The chart's PrometheusRule (issue 31), rendered by the real Helm (scripts/helm/helm-pin.ts):
 * absent by default, and when enabled one rule per alert condition of
 * libs/domain/src/alerts/definitions.ts, in the shape of prometheus-operator's
 * monitoring.coreos.com/v1 PrometheusRule (the fields its CRD lists for a rule, nothing else).
 */
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { alertDefinitions } from "@matoolkit/domain";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { z } from "zod";
import { alertName } from "../../scripts/alerts/alert-rules.ts";
import { installHelm } from "../../scripts/helm/helm-pin.ts";

const root = join(import.meta.dirname, "..", "..");
const chartDir = join(root, "deploy", "helm", "matoolkit");
const helmHome = join(tmpdir(), "matoolkit-helm-home");
let helm = "";

beforeAll(async () => {
  ({ binary: helm } = await installHelm({ env: process.env, log: (line) => console.log(`helm: ${line}`) }));
}, 1_200_000);

function helmRun(args: readonly string[]): string {
  const result = spawnSync(helm, args, {
    encoding: "utf8",
    env: { ...process.env, HELM_CACHE_HOME: helmHome, HELM_CONFIG_HOME: helmHome, HELM_DATA_HOME: helmHome },
  });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`helm ${args[0]} failed: ${result.stderr}`);
  return result.stdout;
}

const values = ["-f", join(chartDir, "ci", "minimal-values.yaml")];
const enabled = [
  "--set",
  "alerts.prometheusRule.enabled=true",
  "--set",
  "alerts.prometheusRule.labels.release=kube-prometheus",
];

function render(extra: readonly string[]): { kind: string }[] {
  const text = helmRun(["template", "matoolkit", chartDir, "--namespace", "matoolkit", ...values, ...extra]);
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as { kind: string } | null)
    .filter((doc): doc is { kind: string } => doc !== null);
}

/** monitoring.coreos.com/v1 PrometheusRule, spec.groups[].rules[] (prometheus-operator API reference). */
const prometheusRuleSchema = z.strictObject({
  apiVersion: z.literal("monitoring.coreos.com/v1"),
  kind: z.literal("PrometheusRule"),
  metadata: z.strictObject({ name: z.string().min(1), labels: z.record(z.string(), z.string()) }),
  spec: z.strictObject({
    groups: z.array(
      z.strictObject({
        name: z.string().min(1),
        rules: z.array(
          z.strictObject({
            alert: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
            expr: z.string().min(1),
            for: z.string().regex(/^\d+[smh]$/),
            labels: z.record(z.string(), z.string()),
            annotations: z.record(z.string(), z.string()),
          }),
        ),
      }),
    ),
  }),
});

describe("the chart's PrometheusRule", () => {
  it("is not rendered by default (it needs prometheus-operator's CRD)", () => {
    expect(render([]).filter((object) => object.kind === "PrometheusRule")).toEqual([]);
  });

  it("when enabled: one rule per alert condition, with its expression, severity and the extra labels", () => {
    const rules = render(enabled).filter((object) => object.kind === "PrometheusRule");
    expect(rules).toHaveLength(1);
    const rule = prometheusRuleSchema.parse(rules[0]);
    expect(rule.metadata.name).toBe("matoolkit-alerts");
    expect(rule.metadata.labels.release).toBe("kube-prometheus");
    const [group] = rule.spec.groups;
    expect(group!.rules).toEqual(
      alertDefinitions.map((definition) => ({
        alert: alertName(definition.id),
        expr: definition.prometheus.expr,
        for: definition.prometheus.for,
        labels: {
          severity: definition.severity,
          matoolkit_condition: definition.id,
          release: "kube-prometheus",
        },
        annotations: { summary: definition.summary, description: definition.description },
      })),
    );
  });

  it("passes helm lint when enabled", () => {
    expect(helmRun(["lint", chartDir, "--namespace", "matoolkit", ...values, ...enabled])).toMatch(
      /1 chart\(s\) linted, 0 chart\(s\) failed/,
    );
  });
});
