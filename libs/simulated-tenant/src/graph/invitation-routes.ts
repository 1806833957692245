import { Router } from "express";
import { z } from "zod";
import type { DirectoryUser, Invitation } from "../model.ts";
import { newDirectoryUser } from "../directory-user.ts";
import type { SimulatorContext } from "../simulator-context.ts";
import { graphErrorBody } from "../error-bodies.ts";
import { invitationsNotAllowedMessage, invitationsRefused } from "./invitation-policy.ts";
import { invitationRefusal } from "./b2b-prerequisites.ts";
import { redeemInvitations } from "./invitation-redemption.ts";
import {
  bodyOf,
  contextUrl,
  operation,
  sendBadRequest,
  sendInvalidValue,
  sendNotFound,
} from "./graph-responses.ts";

const invitationSchema = z.object({
  invitedUserEmailAddress: z.string().includes("@"),
  inviteRedirectUrl: z.url(),
  sendInvitationMessage: z.boolean().optional(),
  invitedUserDisplayName: z.string().optional(),
  invitedUserType: z.enum(["Guest", "Member"]).optional(),
  invitedUser: z.object({ id: z.string().min(1) }).optional(),
});

/**
 * POST /invitations: a new guest, or with `invitedUser.id` an existing internal user invited to
 * B2B collaboration. Every invitation is recorded with `sendInvitationMessage`, so a rehearsal
 * lists the emails a real tenant would have sent; a repeated invitation is recorded again, as a
 * real one sends again. An invited internal user keeps signing in with its own credentials until
 * it redeems the invitation (invitation-redemption.ts); the prerequisites of inviting one are in
 * b2b-prerequisites.ts.
 */
export function invitationRoutes({ state }: SimulatorContext): Router {
  const router = Router();

  router.post("/invitations", (request, response) => {
    if (invitationsRefused(state)) {
      response.status(403).json(graphErrorBody("Forbidden", invitationsNotAllowedMessage));
      return;
    }
    const parsed = invitationSchema.safeParse(bodyOf(request));
    if (!parsed.success) {
      return sendInvalidValue(
        response,
        String(parsed.error.issues[0]?.path[0] ?? "invitedUserEmailAddress"),
        "Invitation",
      );
    }
    const input = parsed.data;
    let user: DirectoryUser;
    if (input.invitedUser !== undefined) {
      const existing = state.findUser(input.invitedUser.id, "primary");
      if (existing === undefined) return sendNotFound(response, input.invitedUser.id);
      const refusal = invitationRefusal(state, existing, input.invitedUserEmailAddress);
      if (refusal !== undefined) return sendBadRequest(response, refusal);
      user = existing;
    } else {
      const local = input.invitedUserEmailAddress.replace("@", "_");
      user = newDirectoryUser(state, {
        userPrincipalName: `${local}#EXT#@${state.domains[0]!}`,
        displayName: input.invitedUserDisplayName ?? input.invitedUserEmailAddress,
        mailNickname: local.replace(/[^A-Za-z0-9._-]/g, ""),
        mail: input.invitedUserEmailAddress,
        userType: input.invitedUserType ?? "Guest",
        identities: [{ signInType: "federated", issuer: "ExternalAzureAD", issuerAssignedId: null }],
      });
    }
    // An existing user keeps its identities until it redeems (invitation-redemption.ts).
    state.users.put({ ...user, externalUserState: "PendingAcceptance" });
    const invitation: Invitation = {
      id: state.newId(),
      invitedUserId: user.id,
      invitedUserEmailAddress: input.invitedUserEmailAddress,
      inviteRedirectUrl: input.inviteRedirectUrl,
      sendInvitationMessage: input.sendInvitationMessage ?? false,
      status: "PendingAcceptance",
      createdDateTime: state.isoNow(),
    };
    state.invitations.put(invitation);
    state.recordChange({
      api: "graph",
      operation: operation(request),
      target: user.userPrincipalName,
      detail: invitation.sendInvitationMessage
        ? `invitation email sent to ${invitation.invitedUserEmailAddress}`
        : "invitation created, no email sent",
    });
    // A rehearsal's invitees may accept at once (behaviours.ts, inviteesRedeem); the answer below
    // is still the invitation as created, PendingAcceptance, as Graph answers it.
    if (state.behaviours.inviteesRedeem === "at-once") redeemInvitations(state, user.id);
    response.status(201).json({
      "@odata.context": contextUrl(request, "invitations/$entity"),
      id: invitation.id,
      inviteRedeemUrl: `https://login.microsoftonline.com/redeem?rd=${invitation.id}`,
      invitedUserDisplayName: user.displayName,
      invitedUserType: user.userType,
      invitedUserEmailAddress: invitation.invitedUserEmailAddress,
      sendInvitationMessage: invitation.sendInvitationMessage,
      resetRedemption: false,
      inviteRedirectUrl: invitation.inviteRedirectUrl,
      status: invitation.status,
      invitedUser: { id: user.id },
    });
  });

  return router;
}
