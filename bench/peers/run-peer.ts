import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBenchChild } from "../bench-child.ts";
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
  try {
    const outcome = await runBenchChild<PeerResult>(
      peerFile,
      {
        ...env,
        BENCH_MEMBERS: String(work.members),
        BENCH_STEPS: String(work.steps),
        BENCH_WORKER_CONCURRENCY: String(work.concurrency),
      },
      join(dir, "peer.json"),
      // Its figures come back through the file; its own printout would repeat them.
      { resultVariable: "BENCH_PEER_RESULT_FILE", showOutput: false },
    );
    return outcome.ok ? outcome : { ok: false, why: `the peer ${outcome.why}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
