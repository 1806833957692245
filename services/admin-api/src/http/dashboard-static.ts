import { existsSync } from "node:fs";
import path from "node:path";
import { isReallyWithin, isWithin, realPathAsFarAsItExists } from "@matoolkit/domain/path-containment";
import express, { type Handler } from "express";
import { dashboardPageHeaders, setHeaders } from "./security-headers.ts";

/**
 * Serves the dashboard (services/dashboard/dist, built by Vite) at `/`. Hashed files under
 * /assets never change, so browsers may keep them a year; index.html is revalidated on every
 * load so a new build is picked up at once. Any other GET that is not an API, probe or problem
 * path gets index.html (the SPA routes with the URL fragment, so this fallback only catches
 * typed or bookmarked paths). Without a build, `/` says how to make one.
 */
export function serveDashboard(
  dir: string | undefined = findDashboardDir(),
  /** index.html's CSP and friends (security-headers.ts); other files keep the strict default. */
  pageHeaders: Readonly<Record<string, string>> = dashboardPageHeaders({ mode: "local" }),
): Handler {
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
      if (path.relative(dir, file) === "index.html") setHeaders(res, pageHeaders);
    },
  });
  const root = realPathAsFarAsItExists(dir);
  return (req, res, next) => {
    if (!isDashboardPath(req.path)) return next();
    const fallback = () => {
      if ((req.method !== "GET" && req.method !== "HEAD") || req.path.startsWith("/assets/")) return next();
      res.setHeader("Cache-Control", "no-cache");
      setHeaders(res, pageHeaders);
      res.sendFile(indexFile, (error) => {
        if (error !== undefined) next(error);
      });
    };
    // express.static follows symlinks: one in the build that leads out is as if the file were missing.
    if (leadsOutside(root, req.path)) return fallback();
    files(req, res, fallback);
  };
}

/** True when the file a request path names exists and its real path is outside `root`. */
function leadsOutside(root: string, requestPath: string): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(requestPath);
  } catch {
    return false; // express.static answers a malformed path itself
  }
  const file = path.join(root, decoded);
  // A `..` climb is express.static's to refuse (403); only existing files can be served at all.
  if (!isWithin(root, file) || !existsSync(file)) return false;
  return !isReallyWithin(root, file);
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
