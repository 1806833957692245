/**
 * `npm run dapr:install [-- --version 1.18.1|newest|oldest] [-- --no-cli] [-- --no-emulators]`:
 * builds the real Dapr binaries (daprd, placement, scheduler of each pinned release, and the dapr
 * CLI) and goaws (the SNS + SQS emulator of the AWS component tests) from their Go modules into
 * ~/.cache/matoolkit/dapr (MATOOLKIT_DAPR_CACHE). Idempotent: seconds when built.
 */
import { parseArgs } from "node:util";
import { installDapr } from "@matoolkit/dapr-harness";

const { values } = parseArgs({
  options: {
    version: { type: "string", multiple: true },
    "no-cli": { type: "boolean" },
    "no-emulators": { type: "boolean" },
  },
});

try {
  const { cacheRoot } = await installDapr({
    env: process.env,
    ...(values.version === undefined ? {} : { versions: values.version }),
    cli: values["no-cli"] !== true,
    emulators: values["no-emulators"] !== true,
    log: (line) => console.log(`dapr:install: ${line}`),
  });
  console.log(`dapr:install: binaries in ${cacheRoot}`);
} catch (error) {
  console.error(`dapr:install: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
