/**
 * Counts the HTTP calls this process makes to the Dapr sidecar (every Dapr adapter of the app goes
 * through global fetch, libs/runtime/src/dapr/dapr-http.ts), by kind: on Dapr these are what SQL
 * statements are to the embedded runtime. The workflow SDK's gRPC stream is not HTTP and is not
 * counted.
 */
export function installSidecarCounter(sidecarUrl: string): {
  count(): number;
  byKind(): Array<{ kind: string; calls: number }>;
  reset(): void;
} {
  const kinds = new Map<string, number>();
  const original = globalThis.fetch;
  globalThis.fetch = function countedFetch(input: string | URL | Request, init?: RequestInit) {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (url.startsWith(sidecarUrl)) {
      const method = init?.method ?? (input instanceof Request ? input.method : "GET");
      const kind = `${method} ${kindOf(new URL(url).pathname)}`;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    return original(input, init);
  } as typeof fetch;
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
