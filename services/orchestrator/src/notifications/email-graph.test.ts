import { startSimulatedTenant, type SimulatedTenant } from "@matoolkit/simulated-tenant";
import { createLogger } from "@matoolkit/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sharedMailGraph, standaloneMailGraph } from "./email-graph.ts";
import type { GraphMailClient } from "./email-notifier.ts";

/** Which Graph client email notifications use, and the mistakes refused at start. */
const logger = createLogger({ level: "silent", name: "test" });
const SENDER = "ops@fabrikam.example";
let tenant: SimulatedTenant;

beforeAll(async () => {
  tenant = await startSimulatedTenant({
    seed: {
      domains: ["fabrikam.example"],
      users: [{ id: "u-ops", userPrincipalName: SENDER, displayName: "Ops" }],
      recipients: [
        {
          Name: "ops",
          RecipientTypeDetails: "UserMailbox",
          PrimarySmtpAddress: SENDER,
          ExternalDirectoryObjectId: "u-ops",
        },
      ],
    },
  });
});
afterAll(async () => {
  await tenant?.close();
});

const sendMail = {
  method: "POST" as const,
  path: `/users/${encodeURIComponent(SENDER)}/sendMail`,
  body: {
    message: {
      subject: "s",
      body: { contentType: "Text", content: "c" },
      toRecipients: [{ emailAddress: { address: "a@fabrikam.example" } }],
    },
    saveToSentItems: false,
  },
};

describe("a standalone orchestrator's mail client", () => {
  it("is the worker's tenant client: a shared simulated tenant receives the mail", async () => {
    const mail = await standaloneMailGraph(
      { MATOOLKIT_TENANT: "simulated", MATOOLKIT_SIMULATED_TENANT_URL: tenant.url },
      logger,
    );
    try {
      await mail.graph.request(sendMail, AbortSignal.timeout(10_000));
      expect(tenant.state.sentMail().map((sent) => sent.from)).toEqual([SENDER]);
      expect(mail.description).toContain(tenant.url);
    } finally {
      await mail.close();
    }
  });

  it("refuses no tenant and a simulated tenant of its own, naming the variables", async () => {
    await expect(standaloneMailGraph({}, logger)).rejects.toThrow(
      /MATOOLKIT_NOTIFY_EMAIL=on needs the target tenant: set MATOOLKIT_TENANT/,
    );
    await expect(standaloneMailGraph({ MATOOLKIT_TENANT: "simulated" }, logger)).rejects.toThrow(
      /needs MATOOLKIT_SIMULATED_TENANT_URL/,
    );
  });
});

describe("all-in-one's mail client", () => {
  it("is the worker's client once it started; before, a send fails with tenant.not_configured", async () => {
    let current: GraphMailClient | undefined = undefined;
    const shared = sharedMailGraph(() => current);
    await expect(shared.graph.request(sendMail, AbortSignal.timeout(1_000))).rejects.toMatchObject({
      reason: "tenant.not_configured",
    });
    const calls: string[] = [];
    current = {
      request: async <T>(request: { path: string }): Promise<T> => {
        calls.push(request.path);
        return undefined as T;
      },
    };
    await shared.graph.request(sendMail, AbortSignal.timeout(1_000));
    expect(calls).toEqual([sendMail.path]);
  });
});
