// The one entry of the production bundle, dist/matoolkit.mjs (built by scripts/build/build.ts).
// The image runs `node /app/dist/matoolkit.mjs <command>`: a container picks its service with an
// argument (args: ["orchestrator"]) or MATOOLKIT_SERVICE. Each entry module below starts its
// service when imported, exactly as under tsx, so importing only the chosen one is the dispatch.
import { chooseCommand, unknownCommandMessage, type Command } from "./commands.ts";

const choice = chooseCommand(process.argv.slice(2), process.env.MATOOLKIT_SERVICE);
if (choice.kind === "unknown") {
  process.stderr.write(`${unknownCommandMessage(choice.requested)}\n`);
  process.exit(2);
}
// The entry modules read their own options from process.argv.slice(2) (the token CLI does):
// leave them only their arguments, as if they had been started directly.
process.argv.splice(2, process.argv.length - 2, ...choice.args);
await start(choice.command);

/** Literal import paths, so the bundler includes each module (lazily initialised). */
async function start(command: Command): Promise<unknown> {
  switch (command) {
    case "all-in-one":
      return import("../../services/all-in-one/src/main.ts");
    case "admin-api":
      return import("../../services/admin-api/src/main.ts");
    case "orchestrator":
      return import("../../services/orchestrator/src/main.ts");
    case "scheduler":
      return import("../../services/scheduler/src/main.ts");
    case "worker":
      return import("../../services/worker/src/main.ts");
    case "migrate":
      return import("../../services/cli/src/migrate-main.ts");
    case "token":
      return import("../../services/admin-api/src/token-cli.ts");
    default: {
      const unreachable: never = command;
      throw new Error(`unhandled command ${String(unreachable)}`);
    }
  }
}
