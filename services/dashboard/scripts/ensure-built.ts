// `npm start`'s prestart hook: builds the dashboard (Vite → services/dashboard/dist) when the
// build is missing or older than its sources, so a fresh clone's `npm install && npm start`
// serves it, and an unchanged tree starts without waiting for a build.
import { isDashboardBuildStale, buildDashboard } from "./dashboard-build.ts";

if (await isDashboardBuildStale()) {
  process.stdout.write("Building the dashboard (services/dashboard/dist)…\n");
  await buildDashboard();
}
