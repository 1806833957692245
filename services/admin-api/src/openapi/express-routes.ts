import type { Express } from "express";

/**
 * Test support: every `METHOD /path` an express app routes, found by walking its router stack
 * (routers mounted with `use(prefix, router)` included), with `:name` written `{name}` as in
 * OpenAPI paths. Middleware that is not a router (auth, the 404 handler) is not a route.
 */
export function listExpressRoutes(app: Express): string[] {
  return walk((app as unknown as { router: RouterLike }).router, "").sort();
}

interface LayerLike {
  readonly route?: { readonly path: string; readonly methods: Record<string, boolean> };
  readonly handle?: Partial<RouterLike>;
  readonly rawPath?: unknown;
}
interface RouterLike {
  readonly stack: readonly LayerLike[];
}

function walk(router: RouterLike, prefix: string): string[] {
  return router.stack.flatMap((layer) => {
    if (layer.route !== undefined) {
      const path = join(prefix, layer.route.path).replace(/:(\w+)/g, "{$1}");
      return Object.keys(layer.route.methods)
        .filter((method) => method !== "_all")
        .map((method) => `${method.toUpperCase()} ${path}`);
    }
    const inner = layer.handle?.stack;
    if (inner === undefined) return [];
    if (typeof layer.rawPath !== "string") throw new Error("a router mounted on a non-string path");
    return walk({ stack: inner }, join(prefix, layer.rawPath));
  });
}

function join(prefix: string, path: string): string {
  const joined = `${prefix}/${path}`.replace(/\/+/g, "/");
  return joined.length > 1 ? joined.replace(/\/$/, "") : joined;
}
