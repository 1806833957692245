import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startSimulatedTenant, type SimulatedTenant } from "../simulated-tenant.ts";

/** Graph sendMail as documented (https://learn.microsoft.com/en-us/graph/api/user-sendmail). */
let tenant: SimulatedTenant;

beforeAll(async () => {
  tenant = await startSimulatedTenant({
    seed: {
      domains: ["fabrikam.example"],
      users: [
        { id: "u-ops", userPrincipalName: "ops@fabrikam.example", displayName: "Ops" },
        { id: "u-nomail", userPrincipalName: "nomail@fabrikam.example", displayName: "No mailbox" },
      ],
      recipients: [
        {
          Name: "ops",
          RecipientTypeDetails: "UserMailbox",
          PrimarySmtpAddress: "ops@fabrikam.example",
          ExternalDirectoryObjectId: "u-ops",
        },
      ],
    },
  });
});
afterAll(async () => {
  await tenant?.close();
});
beforeEach(() => tenant.reset());

async function sendMail(from: string, body: unknown) {
  const response = await fetch(`${tenant.url}/v1.0/users/${encodeURIComponent(from)}/sendMail`, {
    method: "POST",
    headers: { Authorization: "Bearer test", "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as any) };
}

const message = (to: readonly string[]) => ({
  message: {
    subject: "Batch 7 completed",
    body: { contentType: "Text", content: "Batch 7: completed" },
    toRecipients: to.map((address) => ({ emailAddress: { address } })),
  },
  saveToSentItems: false,
});

describe("simulated Graph sendMail", () => {
  it("accepts a mail from a user with a mailbox: 202, no body, recorded with a change log line", async () => {
    const answer = await sendMail("OPS@fabrikam.example", message(["a@x.example", "b@y.example"]));
    expect(answer).toEqual({ status: 202, body: undefined });
    expect(tenant.state.sentMail()).toEqual([
      expect.objectContaining({
        from: "ops@fabrikam.example",
        subject: "Batch 7 completed",
        contentType: "text",
        content: "Batch 7: completed",
        to: ["a@x.example", "b@y.example"],
        saveToSentItems: false,
      }),
    ]);
    const change = tenant.state.changes().at(-1);
    expect(change).toMatchObject({
      api: "graph",
      operation: "POST /v1.0/users/:id/sendMail",
      target: "ops@fabrikam.example",
      detail: "mail sent to 2 recipient(s)",
    });
    // The change log shows no addresses.
    expect(JSON.stringify(change)).not.toContain("a@x.example");
  });

  it("refuses an unknown sender (404) and a sender without a mailbox (404), sending nothing", async () => {
    const unknown = await sendMail("ghost@fabrikam.example", message(["a@x.example"]));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("ErrorInvalidUser");
    const noMailbox = await sendMail("nomail@fabrikam.example", message(["a@x.example"]));
    expect(noMailbox.status).toBe(404);
    expect(noMailbox.body.error.code).toBe("MailboxNotEnabledForRESTAPI");
    expect(tenant.state.sentMail()).toEqual([]);
  });

  it("refuses an app without the application permission Mail.Send: 403 ErrorAccessDenied", async () => {
    tenant.app.revokeGraphPermission("Mail.Send");
    const answer = await sendMail("ops@fabrikam.example", message(["a@x.example"]));
    expect(answer.status).toBe(403);
    expect(answer.body.error.code).toBe("ErrorAccessDenied");
    expect(tenant.state.sentMail()).toEqual([]);
  });

  it("answers 400 to no recipients, a recipient without an address, and an unknown content type", async () => {
    expect((await sendMail("ops@fabrikam.example", message([]))).status).toBe(400);
    expect((await sendMail("ops@fabrikam.example", { message: { subject: "x" } })).status).toBe(400);
    expect((await sendMail("ops@fabrikam.example", message(["not-an-address"]))).status).toBe(400);
    const badType = message(["a@x.example"]);
    badType.message.body.contentType = "markdown";
    expect((await sendMail("ops@fabrikam.example", badType)).status).toBe(400);
    expect(tenant.state.sentMail()).toEqual([]);
  });
});
