import { spawn } from "node:child_process";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";

/** services/dashboard: sources, vite.config.ts and dist/ live here. */
export const dashboardRoot = path.resolve(import.meta.dirname, "..");
const sourceEntries = ["src", "index.html", "vite.config.ts", "package.json"];

/** Whether dist/index.html is missing or older than any source file (tests excluded). */
export async function isDashboardBuildStale(): Promise<boolean> {
  const built = await stat(path.join(dashboardRoot, "dist", "index.html")).catch(() => undefined);
  if (built === undefined) return true;
  for (const entry of sourceEntries) {
    if ((await newestChange(path.join(dashboardRoot, entry))) > built.mtimeMs) return true;
  }
  return false;
}

async function newestChange(file: string): Promise<number> {
  const info = await stat(file).catch(() => undefined);
  if (info === undefined) return 0;
  if (!info.isDirectory()) return /\.test\.tsx?$/.test(file) ? 0 : info.mtimeMs;
  let newest = 0;
  for (const name of await readdir(file))
    newest = Math.max(newest, await newestChange(path.join(file, name)));
  return newest;
}

/** Runs `vite build` in services/dashboard; rejects with its output when it fails. */
export async function buildDashboard(): Promise<void> {
  const vite = path.resolve(dashboardRoot, "../../node_modules/vite/bin/vite.js");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [vite, "build", "--logLevel", "warn"], {
      cwd: dashboardRoot,
      stdio: ["ignore", "inherit", "pipe"],
    });
    let errors = "";
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`vite build failed (exit ${code}):\n${errors}`)),
    );
  });
}
