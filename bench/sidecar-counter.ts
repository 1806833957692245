import { subscribe } from "node:diagnostics_channel";

/**
 * Counts the HTTP calls this process makes to the Dapr sidecar (every Dapr adapter of the app goes
 * through undici, libs/runtime/src/dapr/dapr-http.ts), by kind: on Dapr these are what SQL
 * statements are to the embedded runtime. Counted from undici's `undici:request:create`
 * diagnostics channel, which undici (and Node's own fetch, built on it) publishes every request
 * to. The workflow SDK's gRPC stream is not HTTP and is not counted.
 */
export function installSidecarCounter(sidecarUrl: string): {
  count(): number;
  byKind(): Array<{ kind: string; calls: number }>;
  reset(): void;
} {
  const kinds = new Map<string, number>();
  const sidecarOrigin = new URL(sidecarUrl).origin;
  subscribe("undici:request:create", (message) => {
    const { request } = message as { request: { origin: string | URL; method: string; path: string } };
    if (new URL(String(request.origin)).origin !== sidecarOrigin) return;
    const kind = `${request.method} ${kindOf(new URL(request.path, sidecarOrigin).pathname)}`;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  });
  return {
    count: () => [...kinds.values()].reduce((sum, calls) => sum + calls, 0),
    byKind: () => [...kinds].map(([kind, calls]) => ({ kind, calls })).sort((a, b) => b.calls - a.calls),
    reset: () => kinds.clear(),
  };
}

/** `/v1.0/state/matoolkit-state/transaction` → `state/…/transaction`; keys, names and ids left out. */
function kindOf(path: string): string {
  const [, , api = "", , ...rest] = path.split("/");
  const tail = rest.length > 0 && ["transaction", "bulk", "query"].includes(rest[0]!) ? `/…/${rest[0]}` : "";
  if (api === "publish" && path.includes("/publish/bulk/")) return "publish/bulk";
  return `${api}${tail}`;
}
