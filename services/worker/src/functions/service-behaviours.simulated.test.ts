import { afterEach, describe, expect, it } from "vitest";
import { MatoolkitError, reasonCodes, type ReasonCode } from "@matoolkit/domain";
import type { SimulatedTenantOptions } from "@matoolkit/simulated-tenant";
import { invokeWithThrottleRetry } from "../throttle-retry.ts";
import {
  startSimulatedFixture,
  type SimulatedFixture,
} from "../../test/functions/contract/simulated-fixture.ts";
import { createEntraFunctions } from "./entra/index.ts";
import { createExchangeFunctions } from "./exchange/index.ts";
import type { FunctionModule } from "./worker-function.ts";

/**
 * The standard functions against the simulated tenant's service behaviours (libs/simulated-tenant
 * behaviours.ts), each as strict as the real service: writes on a replica that has not seen a
 * new object, mail-enabled groups Graph cannot change, users synced from on-premises, a tenant
 * that restricts B2B invitations, Exchange's per-tenant concurrency refusal.
 */
const entra: FunctionModule = createEntraFunctions({ replicationGraceMs: 5_000 });
const exchange: FunctionModule = createExchangeFunctions({ lookupPatience: { attempts: 2, delayMs: 20 } });

let simulated: SimulatedFixture | undefined;
afterEach(async () => {
  await simulated?.close();
  simulated = undefined;
});

async function start(options: SimulatedTenantOptions): Promise<SimulatedFixture> {
  simulated = await startSimulatedFixture({
    seed: {
      users: [
        // mail is the address invited below: inviting an internal user needs it (docs/microsoft-fidelity.md).
        {
          id: "u-adele",
          userPrincipalName: "adele@fabrikam.example",
          displayName: "Adele",
          mail: "adele@contoso.example",
        },
        {
          id: "u-megan",
          userPrincipalName: "megan@fabrikam.example",
          displayName: "Megan",
          onPremisesSyncEnabled: true,
        },
      ],
      groups: [
        { id: "g-wave", displayName: "Wave" },
        { id: "g-mail-security", displayName: "Mail security", mailEnabled: true, securityEnabled: true },
        { id: "g-distribution", displayName: "Distribution", mailEnabled: true, securityEnabled: false },
      ],
      recipients: [
        { Name: "adele", RecipientTypeDetails: "MailUser", PrimarySmtpAddress: "adele@fabrikam.example" },
      ],
    },
    ...options,
  });
  return simulated;
}

function run(module: FunctionModule, name: string, params: Record<string, unknown>) {
  return module[name]!(params, simulated!.fixture.context());
}

async function failure(
  promise: Promise<unknown>,
): Promise<{ reason: ReasonCode; retriable: boolean; message: string }> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(MatoolkitError);
  const { reason, retriable, message } = error as MatoolkitError;
  return { reason, retriable, message };
}

describe("a write that refers to an object created moments ago", () => {
  // Reads see new objects at once; the replica that takes writes lags 1.5 s behind.
  const lagging = { behaviours: { writeLagMs: 1_500 } } as const;

  it("Add-EntraGroupMember adds a user created a moment ago, though Graph answers 404 at first", async () => {
    const { fixture, simulator } = await start(lagging);
    const user = await fixture.tenant.graph.request<{ id: string }>(
      {
        method: "POST",
        path: "/users",
        body: {
          accountEnabled: true,
          displayName: "New",
          mailNickname: "new",
          userPrincipalName: "new@fabrikam.example",
          passwordProfile: { password: "Secret-Pass-1" },
        },
      },
      new AbortController().signal,
    );
    expect(await run(entra, "Add-EntraGroupMember", { GroupId: "g-wave", UserId: user.id })).toBe(true);
    expect(simulator.state.groups.get("g-wave", "primary")!.members).toEqual([user.id]);
  });

  it("Add-EntraGroupMember adds to a group created a moment ago, though Graph answers 400 at first", async () => {
    const { fixture, simulator } = await start(lagging);
    const group = await fixture.tenant.graph.request<{ id: string }>(
      {
        method: "POST",
        path: "/groups",
        body: { displayName: "New wave", mailNickname: "newwave", mailEnabled: false, securityEnabled: true },
      },
      new AbortController().signal,
    );
    expect(await run(entra, "Add-EntraGroupMember", { GroupId: group.id, UserId: "u-adele" })).toBe(true);
    expect(simulator.state.groups.get(group.id, "primary")!.members).toEqual(["u-adele"]);
  });

  it("Add-EntraGroupMember fails retryably with graph.replication_lag when the lag outlasts the grace", async () => {
    const { fixture } = await start({ behaviours: { writeLagMs: 60_000 } });
    const user = await fixture.tenant.graph.request<{ id: string }>(
      {
        method: "POST",
        path: "/users",
        body: {
          accountEnabled: true,
          displayName: "Slow",
          mailNickname: "slow",
          userPrincipalName: "slow@fabrikam.example",
          passwordProfile: { password: "Secret-Pass-1" },
        },
      },
      new AbortController().signal,
    );
    const impatient = createEntraFunctions({ replicationGraceMs: 300 });
    const outcome = await failure(
      impatient["Add-EntraGroupMember"]!({ GroupId: "g-wave", UserId: user.id }, fixture.context()),
    );
    expect(outcome).toMatchObject({ reason: reasonCodes.graphReplicationLag, retriable: true });
  });

  it("Set-EntraUserUPN renames a user created a moment ago, though Graph answers 404 at first", async () => {
    const { simulator } = await start(lagging);
    const created = await run(entra, "New-EntraUser", {
      UserPrincipalName: "fresh@fabrikam.example",
      DisplayName: "Fresh",
    });
    const userId = (created as { data: { UserId: string } }).data.UserId;
    expect(
      await run(entra, "Set-EntraUserUPN", {
        UserId: userId,
        NewUserPrincipalName: "final@fabrikam.example",
      }),
    ).toBe(true);
    expect(simulator.state.findUser(userId, "primary")!.userPrincipalName).toBe("final@fabrikam.example");
  });
});

describe("a mail-enabled security group or distribution list", () => {
  it.each(["g-mail-security", "g-distribution"])(
    "Add- and Remove-EntraGroupMember on %s fail permanently with graph.mail_enabled_group naming Exchange",
    async (groupId) => {
      await start({});
      for (const name of ["Add-EntraGroupMember", "Remove-EntraGroupMember"]) {
        const outcome = await failure(run(entra, name, { GroupId: groupId, UserId: "u-adele" }));
        expect(outcome).toMatchObject({ reason: reasonCodes.graphMailEnabledGroup, retriable: false });
        expect(outcome.message).toContain("Add-DistributionGroupMember");
      }
    },
  );
});

describe("a user synced from on-premises Active Directory", () => {
  it("Set-EntraUserUPN fails permanently with graph.on_premises_mastered and changes nothing", async () => {
    const { simulator } = await start({});
    const outcome = await failure(
      run(entra, "Set-EntraUserUPN", { UserId: "u-megan", NewUserPrincipalName: "megan.b@fabrikam.example" }),
    );
    expect(outcome).toMatchObject({ reason: reasonCodes.graphOnPremisesMastered, retriable: false });
    expect(outcome.message).toContain("on-premises Active Directory");
    expect(simulator.state.findUser("u-megan", "primary")!.userPrincipalName).toBe("megan@fabrikam.example");
  });
});

describe("a tenant that restricts B2B invitations", () => {
  it.each(["none", "adminsAndGuestInviters"] as const)(
    "New-EntraB2BInvitation fails permanently with graph.invitations_not_allowed when allowInvitesFrom is %s",
    async (allowInvitesFrom) => {
      const { simulator } = await start({ behaviours: { allowInvitesFrom } });
      const outcome = await failure(
        run(entra, "New-EntraB2BInvitation", {
          UserId: "u-adele",
          InvitedUserEmailAddress: "adele@contoso.example",
        }),
      );
      expect(outcome).toMatchObject({ reason: reasonCodes.graphInvitationsNotAllowed, retriable: false });
      expect(outcome.message).toContain("allowInvitesFrom");
      expect(simulator.state.invitations.list("primary")).toEqual([]);
    },
  );
});

describe("Exchange's per-tenant concurrency refusal", () => {
  it("is throttling: the worker's retry loop absorbs it and the write is made once", async () => {
    const { fixture, simulator } = await start({});
    simulator.exchangeConcurrency.arm(2);
    const outcome = await invokeWithThrottleRetry(
      (attempt) =>
        exchange["Add-ExchangeSecondaryEmail"]!(
          { Identity: "adele", EmailAddress: "adele.v@fabrikam.example" },
          fixture.context({ attempt }),
        ),
      { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 5 },
      new AbortController().signal,
    );
    expect(outcome).toMatchObject({ ok: true, attempts: 3 });
    expect(simulator.exchangeConcurrency.refused).toBe(2);
    expect(simulator.state.findRecipient("adele", "primary")!.EmailAddresses).toContain(
      "smtp:adele.v@fabrikam.example",
    );
  });

  it("maps to exchange.throttled, never exchange.bad_request", async () => {
    const { simulator } = await start({});
    simulator.exchangeConcurrency.arm(1);
    const outcome = await failure(
      run(exchange, "Test-ExchangeAttributeMatch", {
        Identity: "adele",
        Attributes: { RecipientTypeDetails: "MailUser" },
      }),
    );
    expect(outcome).toMatchObject({ reason: reasonCodes.exchangeThrottled, retriable: true });
  });
});

describe("replicas that flap between the old and the new value", () => {
  it("Test-EntraAttributeMatch right after a write passes once a replica shows it", async () => {
    // Old, old, then new: the validator re-reads until the value holds.
    const draws = [0.1, 0.2, 0.9];
    const { fixture } = await start({ replicationDelayMs: 10_000, random: () => draws.shift() ?? 0.9 });
    await fixture.tenant.graph.request(
      { method: "PATCH", path: "/users/u-adele", body: { department: "Ops" } },
      new AbortController().signal,
    );
    expect(
      await run(entra, "Test-EntraAttributeMatch", { UserId: "u-adele", Attributes: { department: "Ops" } }),
    ).toMatchObject({ data: { Match: true } });
  });
});
