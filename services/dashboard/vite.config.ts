import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

// The admin API serves dist/ at `/` (services/admin-api/src/http/dashboard-static.ts); during
// `npm run dev -w services/dashboard` Vite proxies /api to a running `npm start`.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [preact()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true },
  server: { proxy: { "/api": "http://127.0.0.1:8080" } },
});
