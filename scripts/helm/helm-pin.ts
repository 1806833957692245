/**
 * The real `helm` (Helm 3) the chart's tests run (deploy/helm/helm-chart.test.ts), built from its
 * Go module through the Go module proxy, since no prebuilt binary can be downloaded on these
 * machines. Pinned: v3.22.0, the newest Helm 3 release the module proxy served when it was pinned
 * (2026-11-27; it also serves v3.18.4 to v3.21.4; Helm 4 is another CLI and module path).
 * Helm 3.22.0's go.mod has no `replace` directive today; any it gains is repeated in the build's
 * module, as `go build` of a dependency ignores it.
 *
 * Beside it, kube-validate (scripts/helm/kube-validate/main.go), built in the same module from the
 * Kubernetes libraries helm itself uses: it decodes rendered manifests strictly, as the API
 * server's strict field validation does, so a misspelled field of a built-in kind fails.
 *
 * Built into ~/.cache/matoolkit/helm/helm-<version>/helm (MATOOLKIT_HELM_CACHE, else
 * $XDG_CACHE_HOME/matoolkit/helm): outside the work tree, so every clone on a machine (a CI run's
 * fresh clone included) finds it. Idempotent: a stamp beside the binary records how it was built.
 *
 * Only erasable TypeScript syntax: `node scripts/helm/install.ts` runs it without a compile step
 * (npm test's pretest hook), in well under a second when the binary is built.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export const HELM_VERSION = "v3.22.0";
const HELM_MODULE = "helm.sh/helm/v3";

/** Written beside the binary once it is built: how it was built. */
const STAMP = "build.json";

export function helmCacheRoot(env: Readonly<Record<string, string | undefined>>): string {
  const explicit = env.MATOOLKIT_HELM_CACHE?.trim();
  if (explicit !== undefined && explicit !== "") return explicit;
  const xdg = env.XDG_CACHE_HOME?.trim();
  return join(xdg !== undefined && xdg !== "" ? xdg : join(homedir(), ".cache"), "matoolkit", "helm");
}

/** Where the pinned helm binary is (or will be) built. */
export function helmBinary(env: Readonly<Record<string, string | undefined>>): string {
  return join(helmCacheRoot(env), `helm-${HELM_VERSION}`, "helm");
}

/** The strict manifest decoder built beside helm (scripts/helm/kube-validate/main.go). */
export function kubeValidateBinary(env: Readonly<Record<string, string | undefined>>): string {
  return join(helmCacheRoot(env), `helm-${HELM_VERSION}`, "kube-validate");
}

const kubeValidateSource = join(import.meta.dirname, "kube-validate", "main.go");

export interface HelmInstallOutcome {
  readonly binary: string;
  readonly kubeValidate: string;
  readonly built: boolean;
  readonly seconds: number;
}

interface GoModJson {
  readonly Go?: string;
  readonly Require?: ReadonlyArray<{ readonly Path: string; readonly Version: string }>;
  readonly Replace?: ReadonlyArray<{
    readonly Old: { readonly Path: string; readonly Version?: string };
    readonly New: { readonly Path: string; readonly Version?: string };
  }>;
}

/**
 * Builds the pinned helm unless it is built (then it returns in milliseconds): downloads
 * helm.sh/helm/v3 at the pinned version through the module proxy (checked against the checksum
 * database), then `go build`s helm.sh/helm/v3/cmd/helm inside a temporary module that requires
 * it, with helm's own `replace` directives and its Makefile's ldflags (version stamp, Kubernetes
 * version of its client-go, which `helm template` reports as .Capabilities.KubeVersion).
 */
export async function installHelm(options: {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: (line: string) => void;
}): Promise<HelmInstallOutcome> {
  const started = Date.now();
  const binary = helmBinary(options.env);
  const kubeValidate = kubeValidateBinary(options.env);
  const dir = join(binary, "..");
  const seconds = (): number => (Date.now() - started) / 1000;
  if (isBuilt(dir, [binary, kubeValidate])) return { binary, kubeValidate, built: false, seconds: seconds() };

  const go = await findGo(options.env);
  const env = { ...options.env, CGO_ENABLED: "0", GOFLAGS: "-mod=mod" } as NodeJS.ProcessEnv;
  options.log(`downloading ${HELM_MODULE}@${HELM_VERSION} through the Go module proxy`);
  const { stdout: download } = await run(go, ["mod", "download", "-json", `${HELM_MODULE}@${HELM_VERSION}`], {
    env,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: unknown) => ({ stdout: (error as { stdout?: string }).stdout ?? "" }));
  const info = JSON.parse(download || "{}") as { GoMod?: string; Error?: string };
  if (info.GoMod === undefined) {
    throw new Error(`cannot download ${HELM_MODULE}@${HELM_VERSION}: ${info.Error ?? "no go.mod"}`);
  }
  const { stdout: modJson } = await run(go, ["mod", "edit", "-json", info.GoMod], { env });
  const helmMod = JSON.parse(modJson) as GoModJson;
  const clientGo = helmMod.Require?.find((r) => r.Path === "k8s.io/client-go")?.Version;
  const k8sMinor = /^v0\.(\d+)\./.exec(clientGo ?? "")?.[1];
  if (k8sMinor === undefined) throw new Error(`${HELM_MODULE}@${HELM_VERSION}: no k8s.io/client-go v0.x`);
  const ldflags = [
    "-s",
    "-w",
    `-X ${HELM_MODULE}/internal/version.version=${HELM_VERSION}`,
    `-X ${HELM_MODULE}/internal/version.gitTreeState=clean`,
    ...["pkg/lint/rules", "pkg/chartutil"].flatMap((pkg) => [
      `-X ${HELM_MODULE}/${pkg}.k8sVersionMajor=1`,
      `-X ${HELM_MODULE}/${pkg}.k8sVersionMinor=${k8sMinor}`,
    ]),
  ];

  const root = helmCacheRoot(options.env);
  const work = join(root, `.build-${HELM_VERSION}-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const staging = `${dir}.partial-${process.pid}`;
  try {
    const replaces = (helmMod.Replace ?? []).map(
      (r) =>
        `replace ${r.Old.Path}${r.Old.Version ? ` ${r.Old.Version}` : ""} => ${r.New.Path}${r.New.Version ? ` ${r.New.Version}` : ""}`,
    );
    for (const line of replaces) options.log(`  repeating helm's ${line}`);
    writeFileSync(
      join(work, "go.mod"),
      [
        "module matoolkit.local/helm-build",
        "",
        `go ${helmMod.Go ?? "1.24"}`,
        "",
        `require ${HELM_MODULE} ${HELM_VERSION}`,
        ...replaces,
        "",
      ].join("\n"),
    );
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    options.log(
      `building helm ${HELM_VERSION} (Kubernetes 1.${k8sMinor}) with ${(await run(go, ["version"], { env })).stdout.trim()}: minutes on a fresh machine`,
    );
    await run(
      go,
      [
        "build",
        "-trimpath",
        `-ldflags=${ldflags.join(" ")}`,
        "-o",
        join(staging, "helm"),
        `${HELM_MODULE}/cmd/helm`,
      ],
      { cwd: work, env, maxBuffer: 64 * 1024 * 1024 },
    ).catch((error: unknown) => {
      const stderr = (error as { stderr?: string }).stderr ?? "";
      throw new Error(`go build of helm failed:\n${stderr.slice(-4000)}`);
    });
    options.log("building kube-validate (scripts/helm/kube-validate) with helm's Kubernetes libraries");
    mkdirSync(join(work, "kube-validate"));
    copyFileSync(kubeValidateSource, join(work, "kube-validate", "main.go"));
    await run(
      go,
      ["build", "-trimpath", "-ldflags=-s -w", "-o", join(staging, "kube-validate"), "./kube-validate"],
      { cwd: work, env, maxBuffer: 64 * 1024 * 1024 },
    ).catch((error: unknown) => {
      const stderr = (error as { stderr?: string }).stderr ?? "";
      throw new Error(`go build of kube-validate failed:\n${stderr.slice(-4000)}`);
    });
    chmodSync(join(staging, "helm"), 0o755);
    writeFileSync(join(staging, STAMP), stampText());
    // Swapped in whole: a reader never sees a half-built folder; an interrupted build is redone.
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(staging, { recursive: true, force: true });
  }
  return { binary, kubeValidate, built: true, seconds: seconds() };
}

function stampText(): string {
  const kubeValidateSha256 = createHash("sha256").update(readFileSync(kubeValidateSource)).digest("hex");
  return `${JSON.stringify({ module: HELM_MODULE, version: HELM_VERSION, kubeValidateSha256 }, null, 2)}\n`;
}

function isBuilt(dir: string, binaries: readonly string[]): boolean {
  try {
    return (
      readFileSync(join(dir, STAMP), "utf8") === stampText() &&
      binaries.every((binary) => statSync(binary).isFile())
    );
  } catch {
    return false;
  }
}

async function findGo(env: Readonly<Record<string, string | undefined>>): Promise<string> {
  const candidates = [env.GO_BINARY, "go", "/usr/local/go/bin/go"].filter(
    (c): c is string => c !== undefined && c !== "",
  );
  for (const candidate of candidates) {
    try {
      await run(candidate, ["version"], { env: env as NodeJS.ProcessEnv });
      return candidate;
    } catch {
      // next candidate
    }
  }
  throw new Error(
    "Go is needed to build helm from its module and was not found (tried go on PATH and /usr/local/go/bin/go): install Go 1.26 or newer (Debian: golang-go), or set GO_BINARY",
  );
}
