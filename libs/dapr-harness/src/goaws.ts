import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { recipeDir } from "./dapr-cache.ts";
import type { GoBuildRecipe } from "./dapr-pins.ts";
import { freePort } from "./free-port.ts";
import { httpAnswers, startManagedProcess, waitUntilReady, type ManagedProcess } from "./managed-process.ts";

/**
 * goaws, an SNS + SQS emulator (github.com/Admiral-Piett/goaws), built from its Go module like
 * the Dapr binaries (`npm run dapr:install`). v0.4.5 is the newest version the Go module proxy
 * of these machines serves (v0.4.4 and v0.4.5 only; looked up on 2026-11-26).
 */
export const goawsRecipe: GoBuildRecipe = {
  name: "goaws-0.4.5",
  module: "github.com/Admiral-Piett/goaws",
  version: "v0.4.5",
  binaries: [{ package: "./app/cmd", binary: "goaws" }],
  tags: [],
  ldflags: ["-s", "-w"],
  replacements: [],
};

export function goawsBinary(cacheRoot: string): string {
  return join(recipeDir(cacheRoot, goawsRecipe), "goaws");
}

/** The account id goaws puts in every ARN and queue URL (its config's AccountId). */
export const GOAWS_ACCOUNT_ID = "100010001000";

export interface HarnessGoaws {
  /** http://127.0.0.1:<port>: SNS and SQS on one port. */
  readonly endpoint: string;
  readonly region: string;
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * Starts goaws on a free port with an empty configuration (no queues or topics: Dapr creates
 * them). goaws listens on all interfaces (its `http.ListenAndServe("0.0.0.0:"+port)` has no
 * option); everything here talks to it on 127.0.0.1 only.
 */
export async function startGoaws(options: {
  readonly binary: string;
  readonly dataDir: string;
  readonly region: string;
}): Promise<HarnessGoaws> {
  mkdirSync(options.dataDir, { recursive: true });
  const port = await freePort();
  const config = join(options.dataDir, "goaws.yaml");
  writeFileSync(
    config,
    stringify({
      Local: {
        Host: "127.0.0.1",
        Port: String(port),
        Region: options.region,
        AccountId: GOAWS_ACCOUNT_ID,
        LogToFile: false,
        QueueAttributeDefaults: { VisibilityTimeout: 30, ReceiveMessageWaitTimeSeconds: 0 },
      },
    }),
  );
  const process = startManagedProcess({
    name: `goaws :${port}`,
    command: options.binary,
    args: ["-config", config, "Local"],
    cwd: options.dataDir,
    logFile: join(options.dataDir, "goaws.log"),
  });
  const endpoint = `http://127.0.0.1:${port}`;
  await waitUntilReady(process, () => httpAnswers(`${endpoint}/health`), {
    timeoutMs: 20_000,
    what: "answering /health",
  });
  return { endpoint, region: options.region, process, stop: () => process.stop() };
}
