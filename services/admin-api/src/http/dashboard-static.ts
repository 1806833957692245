import { existsSync } from "node:fs";
import path from "node:path";
import express, { type Handler } from "express";

/**
 * Serves the dashboard (services/dashboard/dist, built by Vite) at `/`. Hashed files under
 * /assets never change, so browsers may keep them a year; index.html is revalidated on every
 * load so a new build is picked up at once. Any other GET that is not an API, probe or problem
 * path gets index.html (the SPA routes with the URL fragment, so this fallback only catches
 * typed or bookmarked paths). Without a build, `/` says how to make one.
 */
export function serveDashboard(dir: string | undefined = findDashboardDir()): Handler {
  // Plain middleware, not a Router with routes: the OpenAPI test lists every route the app has.
  if (dir === undefined || !existsSync(path.join(dir, "index.html"))) {
    return (req, res, next) => {
      if (req.method !== "GET" || req.path !== "/") return next();
      res
        .status(503)
        .type("text/plain")
        .send("The dashboard is not built: run `npm run build -w services/dashboard` (npm start does it).\n");
    };
  }
  const indexFile = path.join(dir, "index.html");
  const files = express.static(dir, {
    index: false,
    fallthrough: true,
    setHeaders: (res, file) => {
      const immutable = path.relative(dir, file).startsWith(`assets${path.sep}`);
      res.setHeader("Cache-Control", immutable ? "public, max-age=31536000, immutable" : "no-cache");
    },
  });
  return (req, res, next) => {
    if (!isDashboardPath(req.path)) return next();
    files(req, res, () => {
      if ((req.method !== "GET" && req.method !== "HEAD") || req.path.startsWith("/assets/")) return next();
      res.setHeader("Cache-Control", "no-cache");
      res.sendFile(indexFile, (error) => {
        if (error !== undefined) next(error);
      });
    });
  };
}

/** Paths the API owns (its 404 problem answers them), never the dashboard. */
function isDashboardPath(requestPath: string): boolean {
  return !/^\/(api|problems|healthz|readyz)(\/|$)/.test(requestPath);
}

/**
 * services/dashboard/dist, looked up from this module upwards: it is found both from the source
 * tree (services/admin-api/src/http) and from the bundle (dist/matoolkit.mjs at the repo or image
 * root, with the dashboard copied to the same relative path).
 */
export function findDashboardDir(start: string = import.meta.dirname): string | undefined {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "services", "dashboard", "dist");
    if (existsSync(path.join(candidate, "index.html"))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}
