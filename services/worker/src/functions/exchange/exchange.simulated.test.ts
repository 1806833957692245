import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { NonRetriableError, reasonCodes, type WorkerJobMessage } from "@matoolkit/domain";
import type { TenantSeedInput } from "@matoolkit/simulated-tenant";
import { executeJob } from "../../execute-job.ts";
import { invokeWithThrottleRetry } from "../../throttle-retry.ts";
import {
  startSimulatedFixture,
  type SimulatedFixture,
} from "../../../test/functions/contract/simulated-fixture.ts";
import { settledReplicas } from "../../../test/functions/contract/settled-replicas.ts";
import { createFunctionRegistry } from "../function-registry.ts";
import type { WorkerFunction } from "../worker-function.ts";
import { exchangeContract } from "../../../test/functions/exchange/exchange.contract.ts";
import { createExchangeFunctions } from "./index.ts";

const functions = createExchangeFunctions({ lookupPatience: { attempts: 2, delayMs: 20 } });
const fast = { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 5 };

/** One mailbox under an address policy, one mail user, one group with both: every function has a target. */
const seed: TenantSeedInput = {
  recipients: [
    {
      Name: "megan",
      RecipientTypeDetails: "UserMailbox",
      PrimarySmtpAddress: "megan@fabrikam.example",
      EmailAddresses: ["smtp:megan.b@fabrikam.example"],
      EmailAddressPolicyEnabled: true,
    },
    { Name: "adele", RecipientTypeDetails: "MailUser", PrimarySmtpAddress: "adele@fabrikam.example" },
    {
      Name: "pilot",
      RecipientTypeDetails: "MailUniversalDistributionGroup",
      PrimarySmtpAddress: "pilot@fabrikam.example",
      Members: ["adele"],
    },
  ],
};

const exchangeGuid = "6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d";
/** One call per function that writes (or checks) something on the seeded recipients. */
const calls: readonly (readonly [string, Record<string, unknown>])[] = [
  ["Add-ExchangeSecondaryEmail", { Identity: "adele", EmailAddress: "adele.v@fabrikam.example" }],
  ["Set-ExchangePrimaryEmail", { Identity: "megan", PrimarySmtpAddress: "megan.b@fabrikam.example" }],
  ["Set-ExchangeExternalAddress", { Identity: "adele", ExternalEmailAddress: "adele@contoso.example" }],
  [
    "Set-ExchangeMailUserGuids",
    { Identity: "adele", ExchangeGuid: exchangeGuid, LegacyExchangeDN: "/o=Contoso/cn=adele" },
  ],
  ["Test-ExchangeAttributeMatch", { Identity: "megan", Attributes: { RecipientTypeDetails: "UserMailbox" } }],
  ["Test-ExchangeGroupMembership", { GroupIdentity: "pilot", MemberIdentity: "adele@fabrikam.example" }],
];

describe("Exchange standard functions: contract on the simulated tenant", () => {
  let simulated: SimulatedFixture;
  beforeAll(async () => {
    simulated = await startSimulatedFixture();
  });
  afterAll(async () => {
    await simulated.close();
  });
  exchangeContract(() => simulated.fixture);
});

describe("Exchange standard functions: simulated-only behaviour", () => {
  let simulated: SimulatedFixture | undefined;
  afterEach(async () => {
    await simulated?.close();
    simulated = undefined;
  });
  const fn = (name: string): WorkerFunction => functions[name]!;

  it("sets the primary of a mailbox whose read shows the address policy on, without the on-premises-only EmailAddressPolicyEnabled, the old primary kept", async () => {
    simulated = await startSimulatedFixture({ seed });
    const { fixture, simulator } = simulated;
    expect(simulator.state.findRecipient("megan")!.EmailAddressPolicyEnabled).toBe(true);
    expect(await fn("Set-ExchangePrimaryEmail")(calls[1]![1], fixture.context())).toBe(true);
    expect(simulator.state.findRecipient("megan")).toMatchObject({
      EmailAddresses: ["SMTP:megan.b@fabrikam.example", "smtp:megan@fabrikam.example"],
    });
    expect(simulator.state.changes().map((change) => change.detail)).toEqual([
      expect.not.stringContaining("EmailAddressPolicyEnabled"),
    ]);
    const changes = simulator.state.changes();
    expect(await fn("Set-ExchangePrimaryEmail")(calls[1]![1], fixture.context())).toBe(true);
    expect(simulator.state.changes()).toEqual(changes);
  });

  it("refuses the mail-user-only functions on a mailbox, naming its type", async () => {
    simulated = await startSimulatedFixture({ seed });
    // A cross-tenant move needs a MailUser that never had a mailbox: its own reason code.
    for (const [name, reason] of [
      ["Set-ExchangeExternalAddress", reasonCodes.exchangeBadRequest],
      ["Set-ExchangeMailUserGuids", reasonCodes.exchangeTargetHadMailbox],
    ] as const) {
      const params = {
        Identity: "megan",
        ExternalEmailAddress: "m@contoso.example",
        ExchangeGuid: exchangeGuid,
      };
      const error = await fn(name)(params, simulated.fixture.context()).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(NonRetriableError);
      expect((error as NonRetriableError).reason).toBe(reason);
      expect((error as Error).message).toContain("UserMailbox, not a MailUser");
    }
    expect(simulated.simulator.state.changes()).toEqual([]);
  });

  it("treats template-blank optional GUID parameters as not given", async () => {
    simulated = await startSimulatedFixture({ seed });
    const params = { Identity: "adele", ExchangeGuid: exchangeGuid, ArchiveGuid: "", LegacyExchangeDN: " " };
    expect(await fn("Set-ExchangeMailUserGuids")(params, simulated.fixture.context())).toBe(true);
    expect(simulated.simulator.state.changes().map((change) => change.detail)).toEqual([
      `ExchangeGuid=${JSON.stringify(exchangeGuid)}`,
    ]);
  });

  it("writes nothing on a re-run: the change log holds one write per write function", async () => {
    simulated = await startSimulatedFixture({ seed });
    for (const [name, params] of calls) {
      await fn(name)(params, simulated.fixture.context());
      await fn(name)(params, simulated.fixture.context());
    }
    expect(simulated.simulator.state.changes().map((change) => change.operation)).toEqual([
      "Set-MailUser",
      "Set-Mailbox",
      "Set-MailUser",
      "Set-MailUser",
    ]);
  });

  it.each(calls)(
    "%s succeeds through the worker's throttle retry after 429s and 503s with Retry-After",
    async (name, params) => {
      simulated = await startSimulatedFixture({ seed });
      simulated.simulator.faults.arm({ api: "exchange", count: 1, retryAfterSeconds: 0 });
      simulated.simulator.faults.arm({ api: "exchange", count: 1, status: 503, retryAfterSeconds: 0 });
      const { fixture } = simulated;
      const signal = new AbortController().signal;
      const outcome = await invokeWithThrottleRetry(
        (attempt) => fn(name)(params, fixture.context({ attempt })),
        fast,
        signal,
      );
      expect(outcome).toMatchObject({ ok: true, attempts: 3 });
    },
  );

  it("reports a throttled job as a success through executeJob once the service lets it through", async () => {
    simulated = await startSimulatedFixture({ seed });
    simulated.simulator.faults.arm({ api: "exchange", count: 2, retryAfterSeconds: 0 });
    const job: WorkerJobMessage = {
      JobId: "job-1",
      BatchId: 1,
      WorkerId: "worker-01",
      FunctionName: "add-exchangesecondaryemail",
      Parameters: calls[0]![1],
      CorrelationData: { StepExecutionId: 1, IsInitStep: false, RunbookName: "rb", RunbookVersion: 1 },
    };
    const result = await executeJob(job, createFunctionRegistry(functions), {
      timeoutMs: 5_000,
      throttleRetry: fast,
      tenant: simulated.fixture.tenant,
    });
    expect(result).toMatchObject({ Status: "Success", ResultType: "Boolean", Result: true, Error: null });
    expect(simulated.simulator.faults.counts().exchangeFaults).toBe(2);
  });

  it.each(calls)(
    "%s run twice back to back during replication delay succeeds and writes once",
    async (name, params) => {
      simulated = await startSimulatedFixture({ seed, replicationDelayMs: 300, behaviours: settledReplicas });
      const { fixture, simulator } = simulated;
      const first = await fn(name)(params, fixture.context());
      const second = await fn(name)(params, fixture.context());
      expect(second).toEqual(first);
      expect(simulator.state.changes().length).toBeLessThanOrEqual(1);
    },
  );

  describe("a change rolled back right after it, while reads still show the state before it", () => {
    const archiveGuid = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";
    const otherGuid = "11111111-2222-4333-8444-555555555555";
    const rollbackSeed: TenantSeedInput = {
      recipients: [
        seed.recipients![0]!,
        {
          Name: "adele",
          RecipientTypeDetails: "MailUser",
          PrimarySmtpAddress: "adele@fabrikam.example",
          ExternalEmailAddress: "adele@contoso.example",
          ExchangeGuid: exchangeGuid,
          ArchiveGuid: archiveGuid,
        },
      ],
    };
    const primary = (name: string) => simulated!.simulator.state.findRecipient(name, "primary")!;
    const replica = (name: string) => simulated!.simulator.state.findRecipient(name)!;

    /** Runs the change, checks that reads still show the seeded state, then runs the rollback. */
    async function changeThenRollBack(
      name: string,
      change: Record<string, unknown>,
      rollback: Record<string, unknown>,
      stillShown: (recipient: ReturnType<typeof replica>) => boolean,
    ): Promise<void> {
      simulated = await startSimulatedFixture({
        seed: rollbackSeed,
        replicationDelayMs: 300,
        behaviours: settledReplicas,
      });
      const { fixture } = simulated;
      expect(await fn(name)(change, fixture.context())).toBe(true);
      expect(stillShown(replica(String(change.Identity)))).toBe(true);
      expect(await fn(name)(rollback, fixture.context())).toBe(true);
      // A re-run of the rollback changes nothing more.
      const changes = simulated.simulator.state.changes();
      expect(await fn(name)(rollback, fixture.context())).toBe(true);
      expect(simulated.simulator.state.changes()).toEqual(changes);
    }

    it("Set-ExchangePrimaryEmail B then back to A leaves A primary", async () => {
      await changeThenRollBack(
        "Set-ExchangePrimaryEmail",
        { Identity: "megan", PrimarySmtpAddress: "megan.b@fabrikam.example" },
        { Identity: "megan", PrimarySmtpAddress: "megan@fabrikam.example" },
        (read) => read.PrimarySmtpAddress === "megan@fabrikam.example",
      );
      expect(primary("megan")).toMatchObject({
        PrimarySmtpAddress: "megan@fabrikam.example",
        EmailAddresses: ["SMTP:megan@fabrikam.example", "smtp:megan.b@fabrikam.example"],
      });
    });

    it("Set-ExchangeExternalAddress to another address then back leaves the first one", async () => {
      await changeThenRollBack(
        "Set-ExchangeExternalAddress",
        { Identity: "adele", ExternalEmailAddress: "adele.v@contoso.example" },
        { Identity: "adele", ExternalEmailAddress: "adele@contoso.example" },
        (read) => read.ExternalEmailAddress === "SMTP:adele@contoso.example",
      );
      expect(primary("adele").ExternalEmailAddress).toBe("SMTP:adele@contoso.example");
    });

    it("Set-ExchangeMailUserGuids to other GUIDs then back leaves the first ones", async () => {
      await changeThenRollBack(
        "Set-ExchangeMailUserGuids",
        { Identity: "adele", ExchangeGuid: otherGuid, ArchiveGuid: otherGuid },
        { Identity: "adele", ExchangeGuid: exchangeGuid, ArchiveGuid: archiveGuid },
        (read) => read.ExchangeGuid === exchangeGuid,
      );
      expect(primary("adele")).toMatchObject({ ExchangeGuid: exchangeGuid, ArchiveGuid: archiveGuid });
    });

    it("Set-ExchangeMailUserGuids adds back an X500 address removed a moment ago", async () => {
      const x500 = "X500:/o=Contoso/cn=adele";
      simulated = await startSimulatedFixture({
        seed: { recipients: [{ ...rollbackSeed.recipients![1]!, EmailAddresses: [x500] }] },
        replicationDelayMs: 300,
        behaviours: settledReplicas,
      });
      const { fixture } = simulated;
      await fixture.tenant.exchange.invoke(
        "Set-MailUser",
        {
          Identity: "adele",
          EmailAddresses: { "@odata.type": "#Exchange.GenericHashTable", Remove: [x500] },
        },
        new AbortController().signal,
      );
      expect(replica("adele").EmailAddresses).toContain(x500);
      const params = {
        Identity: "adele",
        ExchangeGuid: exchangeGuid,
        LegacyExchangeDN: "/o=Contoso/cn=adele",
      };
      expect(await fn("Set-ExchangeMailUserGuids")(params, fixture.context())).toBe(true);
      expect(primary("adele").EmailAddresses).toContain(x500);
    });
  });

  it("writes to a mail user created a moment ago, before its creation has replicated", async () => {
    simulated = await startSimulatedFixture({ replicationDelayMs: 300, behaviours: settledReplicas });
    const { fixture, simulator } = simulated;
    const signal = new AbortController().signal;
    const patient = createExchangeFunctions({ lookupPatience: { attempts: 10, delayMs: 50 } });
    await fixture.tenant.exchange.invoke(
      "New-MailUser",
      { Name: "fresh", ExternalEmailAddress: "fresh@contoso.example" },
      signal,
    );
    const params = { Identity: "fresh", EmailAddress: "fresh.alias@fabrikam.example" };
    expect(await patient["Add-ExchangeSecondaryEmail"]!(params, fixture.context())).toBe(true);
    expect(simulator.state.findRecipient("fresh", "primary")!.EmailAddresses).toContain(
      "smtp:fresh.alias@fabrikam.example",
    );
  });
});

describe("Set-ExchangeMailUserGuids: cross-tenant move prerequisites (cross-tenant-mailbox-migration.md)", () => {
  let simulated: SimulatedFixture | undefined;
  afterEach(async () => {
    await simulated?.close();
    simulated = undefined;
  });
  const run = (params: Record<string, unknown>) =>
    functions["Set-ExchangeMailUserGuids"]!(params, simulated!.fixture.context());
  const legacyDn =
    "/o=ExchangeLabs/ou=Exchange Administrative Group (FYDIBOHF23SPDLT)/cn=Recipients/cn=adele";
  const oldDn = "/o=Contoso/ou=First Administrative Group/cn=Recipients/cn=adele.vance";
  const otherDn = "/o=Contoso Legacy/cn=Recipients/cn=avance";
  const targetUser = { userPrincipalName: "adele@fabrikam.example", displayName: "Adele" };
  const target = {
    Name: "adele",
    RecipientTypeDetails: "MailUser" as const,
    PrimarySmtpAddress: "adele@fabrikam.example",
    EmailAddresses: ["smtp:adele.v@fabrikam.example"],
    ExternalDirectoryObjectId: "adele@fabrikam.example",
  };

  it("stamps x500:LegacyExchangeDN and every X500 address of the source once, keeping the target's addresses", async () => {
    simulated = await startSimulatedFixture({ seed: { users: [targetUser], recipients: [target] } });
    const params = {
      Identity: "adele",
      ExchangeGuid: exchangeGuid,
      ArchiveGuid: "00000000-0000-0000-0000-000000000000",
      LegacyExchangeDN: legacyDn,
      // As a CSV cell: ';'-separated, one repeated in another case, one repeating the legacy DN.
      X500Addresses: `X500:${oldDn}; x500:${otherDn};x500:${oldDn.toUpperCase()};X500:${legacyDn}`,
    };
    expect(await run(params)).toBe(true);
    const adele = simulated.simulator.state.findRecipient("adele", "primary")!;
    expect(adele.EmailAddresses).toEqual([
      "SMTP:adele@fabrikam.example",
      "smtp:adele.v@fabrikam.example",
      `X500:${legacyDn}`,
      `X500:${oldDn}`,
      `X500:${otherDn}`,
    ]);
    // No archive on the source: the zero ArchiveGuid is not sent.
    expect(adele).toMatchObject({
      ExchangeGuid: exchangeGuid,
      ArchiveGuid: "00000000-0000-0000-0000-000000000000",
    });
    expect(simulated.simulator.state.changes()).toHaveLength(1);
    expect(await run(params)).toBe(true);
    expect(simulated.simulator.state.changes()).toHaveLength(1);
  });

  it("refuses X500Addresses that are not X500 addresses, naming the parameter", async () => {
    simulated = await startSimulatedFixture({ seed: { users: [targetUser], recipients: [target] } });
    const error = await run({
      Identity: "adele",
      ExchangeGuid: exchangeGuid,
      X500Addresses: "adele@contoso.example",
    }).catch((caught: unknown) => caught);
    expect((error as NonRetriableError).reason).toBe(reasonCodes.workerInvalidParameters);
    expect((error as Error).message).toContain("X500Addresses");
    expect((error as Error).message).not.toContain("adele@contoso.example");
  });

  it("refuses a mail user that had a mailbox before (Get-User PreviousRecipientTypeDetails)", async () => {
    simulated = await startSimulatedFixture({
      seed: { users: [targetUser], recipients: [{ ...target, PreviousRecipientTypeDetails: "UserMailbox" }] },
    });
    const error = await run({ Identity: "adele", ExchangeGuid: exchangeGuid }).catch(
      (caught: unknown) => caught,
    );
    expect((error as NonRetriableError).reason).toBe(reasonCodes.exchangeTargetHadMailbox);
    expect((error as Error).message).toContain("PermanentlyClearPreviousMailboxInfo");
    expect(simulated.simulator.state.changes()).toEqual([]);
  });

  it("refuses a target licensed for Exchange before the GUIDs: still a MailUser (provisioning window) or already a mailbox", async () => {
    const licensed = { ...targetUser, assignedPlans: [{ service: "exchange" }] };
    for (const exchangeLicenseProvisionsMailbox of [false, true]) {
      simulated = await startSimulatedFixture({
        seed: { users: [licensed], recipients: [target] },
        prerequisites: { exchangeLicenseProvisionsMailbox },
      });
      const error = await run({ Identity: "adele", ExchangeGuid: exchangeGuid }).catch(
        (caught: unknown) => caught,
      );
      expect((error as NonRetriableError).reason).toBe(reasonCodes.exchangeLicensedBeforeGuids);
      expect(simulated.simulator.state.changes()).toEqual([]);
      await simulated.close();
      simulated = undefined;
    }
  });

  it("accepts a license assigned after the GUIDs: a re-run on the stamped, licensed mail user succeeds", async () => {
    simulated = await startSimulatedFixture({ seed: { users: [targetUser], recipients: [target] } });
    expect(await run({ Identity: "adele", ExchangeGuid: exchangeGuid })).toBe(true);
    const state = simulated.simulator.state;
    const user = state.users
      .list("primary")
      .find((u) => u.userPrincipalName === targetUser.userPrincipalName)!;
    state.users.put({
      ...user,
      assignedPlans: [
        {
          service: "exchange",
          capabilityStatus: "Enabled",
          servicePlanId: "efb87545-963c-4e0d-99df-69c6916d9eb0",
          assignedDateTime: state.isoNow(),
        },
      ],
    });
    expect(await run({ Identity: "adele", ExchangeGuid: exchangeGuid })).toBe(true);
  });
});
