// Entry point of `matoolkit` (bin/matoolkit.mjs): the only module that reads the process.
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { runCli } from "./run.ts";

// A reader that stops early (`matoolkit batch get 1 | grep -q completed`, `| head`) closes the pipe:
// the rest of the output has nowhere to go, which is not an error of ours (as for cat or ls).
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  home: process.env.HOME?.trim() || os.homedir(),
  stdout: process.stdout,
  stderr: process.stderr,
  fetch: globalThis.fetch,
  sleep: (ms) => sleep(ms),
  now: () => new Date(),
}).catch((error: unknown) => {
  // A bug, not a user error: say so briefly (no stack full of paths, no request data).
  process.stderr.write(`error internal: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
});
process.exitCode = exitCode;
