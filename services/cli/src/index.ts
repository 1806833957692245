export { runCli } from "./run.ts";
export type { CliContext, OutputStream } from "./context.ts";
