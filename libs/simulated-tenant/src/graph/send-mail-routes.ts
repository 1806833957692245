import { Router } from "express";
import type { SimulatorContext } from "../simulator-context.ts";
import type { SentMail } from "../model.ts";
import { graphErrorBody } from "../error-bodies.ts";
import { bodyOf, operation, paramOf, sendBadRequest } from "./graph-responses.ts";

/**
 * POST /users/{id | userPrincipalName}/sendMail, as documented at
 * https://learn.microsoft.com/en-us/graph/api/user-sendmail (application permission Mail.Send):
 * the body is `{ message: { subject, body: { contentType, content }, toRecipients: [{ emailAddress:
 * { address } }] }, saveToSentItems }` and success is `202 Accepted` with no body.
 *
 * As strict as the service on what matoolkit relies on:
 * - the sender must be an existing user (404 `ErrorInvalidUser`) with an Exchange Online mailbox
 *   (404 `MailboxNotEnabledForRESTAPI`, Graph's answer for a user without one);
 * - a message without recipients is a 400 `ErrorInvalidRecipients`; a recipient without an address
 *   is a 400 too; `body.contentType` must be `text` or `html`.
 * Each accepted mail is kept (`state.sentMail()`, for tests) and logged in `changes` (`tenant
 * changes`) with the recipients' count only: subjects and addresses stay in `sentMail`.
 */
export function sendMailRoutes({ state }: SimulatorContext): Router {
  const router = Router();
  router.post("/users/:id/sendMail", (request, response) => {
    const idOrUpn = paramOf(request, "id");
    const user = state.findUser(idOrUpn, "primary");
    if (user === undefined) {
      response
        .status(404)
        .json(graphErrorBody("ErrorInvalidUser", `The requested user '${idOrUpn}' is invalid.`));
      return;
    }
    const hasMailbox = state.recipients.find(
      (recipient) =>
        recipient.ExternalDirectoryObjectId === user.id &&
        (recipient.RecipientTypeDetails === "UserMailbox" ||
          recipient.RecipientTypeDetails === "SharedMailbox"),
      "primary",
    );
    if (hasMailbox === undefined) {
      response
        .status(404)
        .json(
          graphErrorBody(
            "MailboxNotEnabledForRESTAPI",
            "The mailbox is either inactive, soft-deleted, or is hosted on-premise.",
          ),
        );
      return;
    }
    const parsed = parseMessage(bodyOf(request));
    if (typeof parsed === "string")
      return sendBadRequest(response, parsed, undefined, "ErrorInvalidRecipients");
    const mail: SentMail = { from: user.userPrincipalName, ...parsed, at: state.isoNow() };
    state.recordSentMail(mail);
    state.recordChange({
      api: "graph",
      operation: operation(request),
      target: user.userPrincipalName,
      detail: `mail sent to ${mail.to.length} recipient(s)`,
    });
    response.status(202).end();
  });
  return router;
}

function parseMessage(body: Record<string, unknown>): Omit<SentMail, "from" | "at"> | string {
  const message = body.message as Record<string, unknown> | undefined;
  if (typeof message !== "object" || message === null) return "The message is missing.";
  const recipients = message.toRecipients;
  if (!Array.isArray(recipients) || recipients.length === 0)
    return "At least one recipient is not valid., A message can't be sent because it contains no recipients.";
  const to: string[] = [];
  for (const recipient of recipients) {
    const address = (recipient as { emailAddress?: { address?: unknown } } | null)?.emailAddress?.address;
    if (typeof address !== "string" || !address.includes("@")) return "At least one recipient is not valid.";
    to.push(address);
  }
  const content = message.body as { contentType?: unknown; content?: unknown } | undefined;
  const contentType = String(content?.contentType ?? "text").toLowerCase();
  if (contentType !== "text" && contentType !== "html") return "Invalid contentType.";
  return {
    subject: typeof message.subject === "string" ? message.subject : "",
    contentType,
    content: typeof content?.content === "string" ? content.content : "",
    to,
    saveToSentItems: body.saveToSentItems !== false,
  };
}
