/**
 * `npm run dapr:install [-- --version 1.18.1|newest|oldest] [-- --no-cli]`: builds the real Dapr
 * binaries (daprd, placement, scheduler of each pinned release, and the dapr CLI) from their Go
 * modules into ~/.cache/matoolkit/dapr (MATOOLKIT_DAPR_CACHE). Idempotent: seconds when built.
 */
import { parseArgs } from "node:util";
import { installDapr } from "@matoolkit/dapr-harness";

const { values } = parseArgs({
  options: { version: { type: "string", multiple: true }, "no-cli": { type: "boolean" } },
});

try {
  const { cacheRoot } = await installDapr({
    env: process.env,
    ...(values.version === undefined ? {} : { versions: values.version }),
    cli: values["no-cli"] !== true,
    log: (line) => console.log(`dapr:install: ${line}`),
  });
  console.log(`dapr:install: binaries in ${cacheRoot}`);
} catch (error) {
  console.error(`dapr:install: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
