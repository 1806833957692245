import { z } from "zod";
import { MatoolkitError } from "@matoolkit/domain";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import type { EntraSettings } from "./entra-options.ts";
import { flag, text, userReference } from "./entra-params.ts";
import {
  assertInvitable,
  hasExternalMail,
  invitationPrerequisiteProperties,
  isSyncedWithOnPremisesUpn,
} from "./b2b-prerequisites.ts";
import { externalUserProperties, isExternalUser } from "./external-user.ts";
import { findUser, resolveUser, type GraphUser } from "./resolve-directory-object.ts";
import type { RecentInvitations } from "./recent-invitations.ts";
import { untilFound, untilHolds } from "./replication-grace.ts";

const name = "New-EntraB2BInvitation";
const select = [...externalUserProperties, ...invitationPrerequisiteProperties];
const params = z.object({
  UserId: userReference,
  InvitedUserEmailAddress: text.regex(/^[^@\s]+@[^@\s]+\.[^@\s]+$/, "expected an email address"),
  InviteRedirectUrl: z.url().default("https://myapplications.microsoft.com"),
  SendInvitationMessage: flag.default(false),
});

/**
 * New-EntraB2BInvitation (Boolean): invites an existing internal user to B2B collaboration
 * (POST /invitations with `invitedUser: { id }`), so they sign in with their account in the
 * other tenant while keeping this object, its id and memberships. No email unless
 * SendInvitationMessage is true.
 * Never a second invitation: a user already invited or already external (externalUserState set,
 * or a federated identity) → true with no call; an invitation this process sent recently, before
 * reads show it, counts too (see recent-invitations.ts).
 * Before inviting, the documented prerequisites (b2b-prerequisites.ts): a user synced with
 * onPremisesUserPrincipalName → entra.invitation_synced_user; `mail` not the invited address →
 * entra.invitation_mail_mismatch (after re-reading for the replication grace: mail may have been
 * set by the step before). Both permanent, and Graph is not called.
 */
export function newEntraB2BInvitation(settings: EntraSettings, recent: RecentInvitations): WorkerFunction {
  return async (raw, context) => {
    const p = parseFunctionParams(name, params, raw);
    const named = { functionName: name, parameter: "UserId" };
    const read = await resolveUser(context, settings, named, p.UserId, select);
    if (isExternalUser(read) || recent.get(read.id) === "sent") return true;
    const user = await prerequisitesRead(read);
    assertInvitable(name, user, p.InvitedUserEmailAddress);
    if (recent.get(user.id) === "unknown") {
      // The last attempt got no answer: if it did reach Graph, the user turns external.
      const invited = await untilFound(
        async () => {
          const current = await findUser(context.tenant.graph, user.id, select, context.signal);
          return current !== undefined && isExternalUser(current) ? true : undefined;
        },
        settings.replicationGraceMs,
        context.signal,
      );
      if (invited) return true;
    }
    try {
      await context.tenant.graph.request(
        {
          method: "POST",
          path: "/invitations",
          body: {
            invitedUserEmailAddress: p.InvitedUserEmailAddress,
            inviteRedirectUrl: p.InviteRedirectUrl,
            sendInvitationMessage: p.SendInvitationMessage,
            invitedUser: { id: user.id },
          },
        },
        context.signal,
      );
    } catch (error) {
      // A refusal (4xx) or throttling created nothing; no answer at all may hide a success.
      if (error instanceof MatoolkitError && (!error.retriable || error.reason.endsWith(".throttled"))) {
        recent.delete(user.id);
      } else {
        recent.set(user.id, "unknown");
      }
      throw error;
    }
    recent.set(user.id, "sent");
    return true;

    /** A mismatch may be a stale read of a mail set moments ago: re-read for the grace first. */
    async function prerequisitesRead(first: GraphUser): Promise<GraphUser> {
      const holds = (user: GraphUser | undefined) =>
        user !== undefined &&
        (isSyncedWithOnPremisesUpn(user) || hasExternalMail(user, p.InvitedUserEmailAddress));
      if (holds(first)) return first;
      const latest = await untilHolds(
        () => findUser(context.tenant.graph, first.id, select, context.signal),
        holds,
        settings.replicationGraceMs,
        context.signal,
      );
      return latest ?? first;
    }
  };
}
