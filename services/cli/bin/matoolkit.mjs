#!/usr/bin/env node
// The CLI is TypeScript run by tsx (as every service here): register its loader, then start.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
