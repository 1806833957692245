/**
 * `npm run helm:install`: builds the pinned real `helm` (scripts/helm/helm-pin.ts) from its Go
 * module into ~/.cache/matoolkit/helm/helm-<version>/helm (MATOOLKIT_HELM_CACHE). Idempotent:
 * well under a second when built. npm test's pretest hook runs it (`node scripts/helm/install.ts`).
 */
import { HELM_VERSION, installHelm } from "./helm-pin.ts";

try {
  const outcome = await installHelm({
    env: process.env,
    log: (line) => console.log(`helm:install: ${line}`),
  });
  console.log(
    `helm:install: helm ${HELM_VERSION} and kube-validate ${outcome.built ? `built in ${outcome.seconds.toFixed(0)} s` : "already built"}: ${outcome.binary}, ${outcome.kubeValidate}`,
  );
} catch (error) {
  console.error(`helm:install: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
