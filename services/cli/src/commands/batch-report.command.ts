import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { rename, rm } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { tokenSourceFor } from "../auth/token-source-for.ts";
import type { OutputStream } from "../context.ts";
import { CliError, exitCodes } from "../errors.ts";
import { apiPath } from "../http/api-client.ts";
import { errorFromResponse } from "../http/problem.ts";
import { action, type CommandRuntime } from "./action.ts";
import { positiveId } from "./arguments.ts";
import type { Session } from "./session.ts";

/**
 * `batch report <id> [-o file]`: the batch's status report (GET /api/batches/{id}/report.csv),
 * always CSV (also with --json: it is a file for a spreadsheet). Streamed: chunks are written as
 * they arrive, so a 50,000-member report never sits in memory. A file is written beside its
 * final name and renamed at the end: a download cut off leaves no complete-looking report.
 */
export function registerBatchReportCommand(batch: Command, runtime: CommandRuntime): void {
  batch
    .command("report")
    .description("download a batch's status report as CSV: one row per member, columns per step")
    .argument("<id>", "batch id", positiveId)
    .option("-o, --output <file>", "write to this file instead of stdout")
    .action(
      action(runtime, async (session, id: number, options: { output?: string }) => {
        const body = await openReport(session, id);
        if (options.output === undefined) {
          await copy(body, session.context.stdout);
          return;
        }
        const file = path.resolve(session.context.cwd, options.output);
        const partial = `${file}.partial`;
        try {
          // pipeline: backpressure from the file, and every error (the file's, the transfer's) surfaces here.
          await pipeline(Readable.fromWeb(body as WebReadableStream<Uint8Array>), createWriteStream(partial));
          await rename(partial, file);
        } catch (error) {
          await rm(partial, { force: true });
          throw isFileError(error)
            ? new CliError(
                exitCodes.failed,
                "output.unwritable",
                `cannot write ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`,
              )
            : cutOff();
        }
        session.context.stderr.write(`Wrote ${file}\n`);
      }),
    );
}

/** The response body once the API answered 200; the API's problem (404…) as a CliError otherwise. */
async function openReport(session: Session, id: number): Promise<ReadableStream<Uint8Array>> {
  const { settings, context } = session;
  const reportPath = apiPath("batches", id, "report.csv");
  const token = await tokenSourceFor(settings, session.stateDir, context).token();
  let response: Response;
  try {
    response = await context.fetch(new URL(`${settings.apiUrl}${reportPath}`), {
      headers: { authorization: `Bearer ${token}`, accept: "text/csv, application/problem+json" },
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
    const reason = typeof cause?.code === "string" ? cause.code : (error as Error).message;
    throw new CliError(
      exitCodes.failed,
      "network.unreachable",
      `cannot reach the admin API at ${settings.apiUrl} (${reason}): is the server running, and is api-url right?`,
    );
  }
  if (!response.ok || response.body === null) {
    throw errorFromResponse(response.status, response.statusText, await response.text());
  }
  return response.body;
}

/** Copies the body chunk by chunk, waiting for 'drain' where the destination asks to. */
async function copy(body: ReadableStream<Uint8Array>, out: OutputStream): Promise<void> {
  const decoder = new TextDecoder();
  try {
    for await (const chunk of body) {
      const text = decoder.decode(chunk, { stream: true });
      if (text !== "" && out.write(text) === false && hasOnce(out)) await once(out, "drain");
    }
  } catch {
    throw cutOff();
  }
  const rest = decoder.decode();
  if (rest !== "") out.write(rest);
}

/** The server cut the transfer (it failed after the first row): never pass it off as complete. */
function cutOff(): CliError {
  return new CliError(exitCodes.failed, "http.incomplete", "the report download was cut off; try again");
}

/** An error of the file system (open, write, rename), as opposed to the transfer. */
function isFileError(error: unknown): boolean {
  return typeof (error as { syscall?: unknown } | null)?.syscall === "string";
}

function hasOnce(out: unknown): out is NodeJS.EventEmitter {
  return typeof (out as { once?: unknown }).once === "function";
}
