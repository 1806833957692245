import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PeerResult } from "./graphile-worker-chain.ts";

export type { PeerResult };

export type PeerOutcome =
  { readonly ok: true; readonly result: PeerResult } | { readonly ok: false; readonly why: string };

const peerFile = join(import.meta.dirname, "graphile-worker-chain.ts");

/**
 * Runs the graphile-worker peer in a process of its own (its own event loop and pg pool, as a
 * separate service would have; its statements are not counted as ours), with the same members,
 * steps and concurrency, and reads back its figures. The caller runs it when nothing of its own
 * is running, so the two never share the cores.
 */
export async function runPeer(
  env: Readonly<Record<string, string | undefined>>,
  work: { readonly members: number; readonly steps: number; readonly concurrency: number },
): Promise<PeerOutcome> {
  const dir = mkdtempSync(join(tmpdir(), "matoolkit-bench-peer-"));
  const resultFile = join(dir, "peer.json");
  try {
    // The same node and loader (tsx's --import) as this process, so the child runs the .ts file.
    const child = spawn(process.execPath, [...process.execArgv, peerFile], {
      env: {
        ...env,
        BENCH_MEMBERS: String(work.members),
        BENCH_STEPS: String(work.steps),
        BENCH_WORKER_CONCURRENCY: String(work.concurrency),
        BENCH_PEER_RESULT_FILE: resultFile,
      },
      // Its figures come back through the file; its own printout would repeat them.
      stdio: ["ignore", "ignore", "inherit"],
    });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    const code = await new Promise<number | string>((resolve) =>
      child.once("exit", (exitCode, signal) => resolve(exitCode ?? signal ?? "unknown")),
    );
    process.off("SIGINT", forward);
    process.off("SIGTERM", forward);
    if (code !== 0) return { ok: false, why: `the peer failed (exit ${code})` };
    return { ok: true, result: JSON.parse(readFileSync(resultFile, "utf8")) as PeerResult };
  } catch (error) {
    return { ok: false, why: `the peer gave no result (${String(error)})` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
