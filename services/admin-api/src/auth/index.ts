// The shared auth library, plus the Express middleware that applies it to the admin API's routes.
export * from "@matoolkit/auth";
export { authenticate, principalOf, requireReadAccess, requireRole, sendAuthError } from "./middleware.ts";
