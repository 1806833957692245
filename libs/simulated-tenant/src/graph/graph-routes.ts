import { Router } from "express";
import type { SimulatorContext } from "../simulator-context.ts";
import { conversionRoutes } from "./conversion-routes.ts";
import { groupsRoutes } from "./groups-routes.ts";
import { invitationRoutes } from "./invitation-routes.ts";
import { authorizationPolicyRoutes } from "./invitation-policy.ts";
import { membershipRoutes } from "./membership-routes.ts";
import { sendMailRoutes } from "./send-mail-routes.ts";
import { usersRoutes } from "./users-routes.ts";

/**
 * Microsoft Graph endpoints (v1.0 and beta) of the simulated tenant. The same routes serve both
 * versions (each module reads the version from the mount point); beta-only actions answer v1.0
 * callers with Graph's "Resource not found for the segment" 400. Authentication and injected
 * throttling run before this router (simulated-tenant.ts).
 */
export function graphRoutes(context: SimulatorContext): Router {
  const versioned = Router();
  versioned.use(usersRoutes(context));
  versioned.use(groupsRoutes(context));
  versioned.use(membershipRoutes(context));
  versioned.use(invitationRoutes(context));
  versioned.use(conversionRoutes(context));
  versioned.use(authorizationPolicyRoutes(context));
  versioned.use(sendMailRoutes(context));
  const router = Router();
  router.use(["/v1.0", "/beta"], versioned);
  return router;
}
