import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { createLogger } from "../../src/logger.ts";
import { startTracing } from "../../src/telemetry/tracing.ts";

/** Test support: tracing started for this process with every finished span kept in memory. */
export interface InMemoryTracing {
  spans(): ReadableSpan[];
  /** The finished span with this id; throws when there is none (a broken parent chain). */
  span(spanId: string): ReadableSpan;
  /** From a span up through its parents, as far as finished spans of this process go. */
  ancestry(span: ReadableSpan): ReadableSpan[];
  shutdown(): Promise<void>;
}

export function startInMemoryTracing(serviceName = "matoolkit-test"): InMemoryTracing {
  const exporter = new InMemorySpanExporter();
  const tracing = startTracing({
    serviceName,
    exporter,
    logger: createLogger({ level: "silent", name: "in-memory-tracing" }),
  });
  const spans = () => exporter.getFinishedSpans();
  const find = (spanId: string) => spans().find((candidate) => candidate.spanContext().spanId === spanId);
  return {
    spans,
    span(spanId) {
      const found = find(spanId);
      if (found === undefined) throw new Error(`no finished span ${spanId}`);
      return found;
    },
    ancestry(span) {
      const chain = [span];
      for (;;) {
        const parentId = chain.at(-1)!.parentSpanContext?.spanId;
        const parent = parentId === undefined ? undefined : find(parentId);
        if (parent === undefined) return chain;
        chain.push(parent);
      }
    },
    shutdown: () => tracing.shutdown(),
  };
}
