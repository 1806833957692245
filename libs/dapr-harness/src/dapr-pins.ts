/**
 * The Dapr versions this repository builds and runs (`npm run dapr:install`), and how each is
 * built from its Go module. Two runtimes are pinned: the oldest supported minor (1.16) and the
 * newest release; the suites run on both.
 *
 * Why not the newest patch of each: the Go module proxy these machines reach serves only some
 * versions of Dapr's modules. Looked up on 2026-11-26 (`go mod download -json MODULE@VERSION`):
 * - github.com/dapr/dapr v1.16.6–v1.16.9 are refused (403, or 404 from the checksum database for
 *   v1.16.8); v1.16.5 is the newest 1.16 served.
 * - v1.18.2 and v1.18.3 need github.com/dapr/durabletask-go v0.12.2-…/v0.12.4, and v1.18.3 also a
 *   pulsar-client-go fork and iskorotkov/avro: all refused (403). v1.18.1 is the newest whose
 *   sidecar and placement build from served modules.
 * - The scheduler of v1.18.1 needs github.com/diagridio/go-etcd-cron v0.12.5 and that of v1.16.5
 *   needs v0.9.2, both refused. Each is built with the nearest served version instead (below):
 *   the only module of a build that differs from the release's go.mod.
 * - Dapr 1.16.5 (go 1.24) needs github.com/choleraehyq/pid v0.0.20 (kitex binding), whose amd64
 *   assembly Go 1.26 refuses ("expected pseudo-register; found R13"); it is built with v0.0.23.
 * - The CLI: github.com/dapr/cli v1.16.5 is the only recent one served; it needs
 *   components-contrib v1.16.3 (refused), built with v1.16.5 (the runtime 1.16.5's own).
 */

/** A module built at another version than the release's go.mod names, and why. */
export interface ModuleReplacement {
  readonly module: string;
  readonly version: string;
  /**
   * A module whose go.sum records this module at `version`: its hashes are copied into the build's
   * go.sum, so the download is still verified where the checksum database has no record of it.
   * Absent: the Go checksum database verifies it, as any download.
   */
  readonly checksumsFrom?: string;
  readonly why: string;
}

export interface GoBuildRecipe {
  /** Folder under the cache: e.g. `runtime-1.18.1`, `cli-1.16.5`. */
  readonly name: string;
  readonly module: string;
  readonly version: string;
  /** Packages to build, relative to the module root, and the binary each gives. */
  readonly binaries: ReadonlyArray<{ readonly package: string; readonly binary: string }>;
  readonly tags: readonly string[];
  readonly ldflags: readonly string[];
  readonly replacements: readonly ModuleReplacement[];
}

/** A pinned Dapr runtime: daprd, placement and scheduler of one release. */
export interface DaprRuntimePin {
  readonly version: string;
  readonly recipe: GoBuildRecipe;
}

function runtimeRecipe(version: string, replacements: readonly ModuleReplacement[]): DaprRuntimePin {
  return {
    version,
    recipe: {
      name: `runtime-${version}`,
      module: "github.com/dapr/dapr",
      version: `v${version}`,
      binaries: ["daprd", "placement", "scheduler"].map((binary) => ({ package: `./cmd/${binary}`, binary })),
      // daprd registers its components only under a build tag; the release images use this one.
      tags: ["allcomponents"],
      // As dapr/dapr's Makefile builds a release: stripped, with the version daprd reports.
      ldflags: ["-s", "-w", `-X github.com/dapr/dapr/pkg/buildinfo.version=${version}`],
      replacements,
    },
  };
}

export const newestDapr: DaprRuntimePin = runtimeRecipe("1.18.1", [
  {
    module: "github.com/diagridio/go-etcd-cron",
    version: "v0.12.7",
    checksumsFrom: "github.com/dapr/dapr@v1.18.3",
    why: "v0.12.5 is not served here; v0.12.7 is the version Dapr 1.18.3's scheduler ships",
  },
]);

export const oldestDapr: DaprRuntimePin = runtimeRecipe("1.16.5", [
  {
    module: "github.com/choleraehyq/pid",
    version: "v0.0.23",
    why: "v0.0.20's amd64 assembly does not build with Go 1.26 (the Go these machines have); v0.0.23 supports it (runtime_go1.26.go)",
  },
  {
    module: "github.com/diagridio/go-etcd-cron",
    version: "v0.9.1",
    checksumsFrom: "github.com/dapr/dapr@v1.16.0",
    why: "v0.9.2 is not served here; v0.9.1 is the version Dapr 1.16.0's scheduler ships",
  },
]);

export const pinnedDaprRuntimes: readonly DaprRuntimePin[] = [newestDapr, oldestDapr];

export const daprCliVersion = "1.16.5";

export const daprCliRecipe: GoBuildRecipe = {
  name: `cli-${daprCliVersion}`,
  module: "github.com/dapr/cli",
  version: `v${daprCliVersion}`,
  binaries: [{ package: ".", binary: "dapr" }],
  tags: [],
  // As dapr/cli's Makefile: the CLI's version and the runtime API version it speaks.
  ldflags: ["-s", "-w", `-X main.version=${daprCliVersion}`, "-X main.apiVersion=1.0"],
  replacements: [
    {
      module: "github.com/dapr/components-contrib",
      version: "v1.16.5",
      checksumsFrom: "github.com/dapr/dapr@v1.16.5",
      why: "v1.16.3 is not served here; v1.16.5 is the version Dapr 1.16.5 ships",
    },
  ],
};

/** The pinned runtime of a version string (`1.18.1`, `newest`, `oldest`), or an error naming the choices. */
export function daprRuntimePin(version: string): DaprRuntimePin {
  if (version === "newest") return newestDapr;
  if (version === "oldest") return oldestDapr;
  const pin = pinnedDaprRuntimes.find((candidate) => candidate.version === version.replace(/^v/, ""));
  if (pin === undefined) {
    const choices = pinnedDaprRuntimes.map((candidate) => candidate.version).join(", ");
    throw new Error(`Dapr ${version} is not pinned here: choose one of ${choices} (or newest, oldest)`);
  }
  return pin;
}
