import { Worker } from "node:worker_threads";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type {
  FromExportThread,
  SpanContextRecord,
  SpanExportThreadData,
  SpanRecord,
  ToExportThread,
} from "./span-export-thread.ts";

export interface ThreadSpanExporterOptions {
  readonly protocol: SpanExportThreadData["protocol"];
  readonly url: string;
  /** Told once per thread that failed (its stable reason, never a span's content). */
  readonly onThreadFailure: (reason: string) => void;
  /** Tests: another entry file for the thread (one that fails to load). */
  readonly threadEntry?: URL;
}

/**
 * A SpanExporter whose encoding and sending run on a worker thread (span-export-thread.ts), with
 * the OTLP exporter of the configured protocol. Issue 29: the JavaScript OTLP encoders ran on the
 * services' event loop, inside whichever `span.end()` filled the BatchSpanProcessor's batch (512
 * spans encoded at once), and were half of what telemetry cost a step. Here the event loop only
 * copies each span's fields into a plain record and posts the batch; the BatchSpanProcessor in
 * front keeps its queue, its limits and its one export at a time, as with any exporter.
 *
 * The thread is started at the first export, and again after one that failed once a back-off has
 * passed (the exports in flight and those of the back-off fail: the processor drops those spans,
 * as after a collector error). It does not keep the process alive, except while an answer is
 * awaited; shutting down waits for its last sends at most SHUTDOWN_WAIT_MS.
 */
export class ThreadSpanExporter implements SpanExporter {
  private thread: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, (result: FromExportThread) => void>();
  private stopped = false;
  private restartAfter = 0;

  constructor(private readonly options: ThreadSpanExporterOptions) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.stopped) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error("span exporter is shut down") });
      return;
    }
    let records: SpanRecord[];
    try {
      records = spans.map(toSpanRecord);
    } catch (error) {
      resultCallback({ code: ExportResultCode.FAILED, error: error as Error });
      return;
    }
    void this.ask((id) => ({ type: "export", id, spans: records })).then((answer) =>
      resultCallback({
        code: answer.code,
        ...(answer.error === undefined ? {} : { error: new Error(answer.error) }),
      }),
    );
  }

  async forceFlush(): Promise<void> {
    if (this.thread === undefined) return;
    await this.ask((id) => ({ type: "flush", id }));
  }

  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const thread = this.thread;
    if (thread === undefined) return;
    // The thread's exporter sends what it holds, then the thread is stopped whatever it answered
    // (a collector that does not answer must not hold the process's exit).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.ask((id) => ({ type: "shutdown", id })),
      new Promise((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS))),
    ]);
    clearTimeout(timer);
    this.thread = undefined;
    await thread.terminate();
  }

  /** Posts the message made with a fresh id; resolves with the thread's answer (or a failure). */
  private async ask(message: (id: number) => ToExportThread): Promise<FromExportThread> {
    const id = this.nextId++;
    const thread = this.startedThread();
    if (thread === undefined) {
      return {
        id,
        code: ExportResultCode.FAILED,
        error: "span export thread failed recently; spans dropped",
      };
    }
    const answered = new Promise<FromExportThread>((resolve) => this.pending.set(id, resolve));
    if (this.pending.size === 1) thread.ref();
    try {
      thread.postMessage(message(id));
    } catch (error) {
      // Not clonable (a span attribute of a kind OpenTelemetry does not allow): this batch only.
      this.settle(thread, id, {
        id,
        code: ExportResultCode.FAILED,
        error: error instanceof Error ? error.message : String(error),
      });
    }
    return answered;
  }

  private settle(thread: Worker, id: number, answer: FromExportThread): void {
    const resolve = this.pending.get(id);
    this.pending.delete(id);
    if (this.pending.size === 0) thread.unref();
    resolve?.(answer);
  }

  /** The thread, started if need be; undefined while a failed one's back-off runs. */
  private startedThread(): Worker | undefined {
    if (this.thread !== undefined) return this.thread;
    if (Date.now() < this.restartAfter) return undefined;
    const data: SpanExportThreadData = {
      role: "matoolkit-span-export",
      protocol: this.options.protocol,
      url: this.options.url,
    };
    const thread = new Worker(this.options.threadEntry ?? spanExportThreadEntry, { workerData: data });
    thread.unref();
    thread.on("message", (answer: FromExportThread) => this.settle(thread, answer.id, answer));
    const fail = (reason: string): void => {
      if (this.thread !== thread) return;
      this.thread = undefined;
      for (const id of [...this.pending.keys()])
        this.settle(thread, id, { id, code: ExportResultCode.FAILED, error: reason });
      if (this.stopped) return;
      // A thread that cannot start (its file missing from an image) would fail every export: wait
      // before the next try, so it costs a log line per back-off, not per batch.
      this.restartAfter = Date.now() + RESTART_BACKOFF_MS;
      this.options.onThreadFailure(reason);
    };
    // An error the thread did not catch: its name says what broke; its message is left out (the
    // thread handles span records, and a message could quote one).
    thread.on("error", (error) => fail(`span export thread failed: ${error.name}`));
    thread.on("exit", (code) => fail(`span export thread exited with code ${code}`));
    this.thread = thread;
    return thread;
  }
}

/**
 * The thread's file. Named `*-thread.ts` and referenced so: the production build bundles it beside
 * the bundle and points this reference there (scripts/build/build.ts, threadEntryReference).
 */
const spanExportThreadEntry = new URL("./span-export-thread.ts", import.meta.url);

/** How long shutdown waits for the thread's exporter to send what it holds. */
const SHUTDOWN_WAIT_MS = 10_000;

/** How long after a failed thread the next one may start. */
const RESTART_BACKOFF_MS = 30_000;

/** The fields the OTLP encoders read (span-export-thread.ts, SpanRecord), as plain data. */
export function toSpanRecord(span: ReadableSpan): SpanRecord {
  const scope = span.instrumentationScope;
  return {
    name: span.name,
    kind: span.kind,
    context: toContextRecord(span.spanContext()),
    ...(span.parentSpanContext === undefined ? {} : { parent: toContextRecord(span.parentSpanContext) }),
    startTime: span.startTime,
    endTime: span.endTime,
    duration: span.duration,
    status: span.status,
    attributes: span.attributes,
    events: span.events,
    links: span.links.map((link) => ({
      context: toContextRecord(link.context),
      ...(link.attributes === undefined ? {} : { attributes: link.attributes }),
      ...(link.droppedAttributesCount === undefined
        ? {}
        : { droppedAttributesCount: link.droppedAttributesCount }),
    })),
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
    resource: {
      attributes: span.resource.attributes,
      ...(span.resource.schemaUrl === undefined ? {} : { schemaUrl: span.resource.schemaUrl }),
    },
    scope: {
      name: scope.name,
      ...(scope.version === undefined ? {} : { version: scope.version }),
      ...(scope.schemaUrl === undefined ? {} : { schemaUrl: scope.schemaUrl }),
    },
  };
}

function toContextRecord(context: ReturnType<ReadableSpan["spanContext"]>): SpanContextRecord {
  const traceState = context.traceState?.serialize();
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    traceFlags: context.traceFlags,
    ...(context.isRemote === undefined ? {} : { isRemote: context.isRemote }),
    ...(traceState === undefined || traceState === "" ? {} : { traceState }),
  };
}
