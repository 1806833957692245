import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MatoolkitError, reasonCodes } from "@matoolkit/domain";
import type { TenantSeedInput } from "@matoolkit/simulated-tenant";
import {
  startSimulatedFixture,
  type SimulatedFixture,
} from "../../../test/functions/contract/simulated-fixture.ts";
import { settledReplicas } from "../../../test/functions/contract/settled-replicas.ts";
import type { ExchangeClient } from "../../tenant/exchange-client.ts";
import type { FunctionModule } from "../worker-function.ts";
import { createExchangeFunctions } from "./index.ts";
import type { LookupPatience } from "./lookup-patience.ts";

/**
 * The Test-* validators used as post-write verifications: reads lag writes by 300 ms, so a
 * validator run right after the write first reads a stale replica. It must re-read within the
 * lookup patience and pass, and still report a genuine mismatch once the patience has run out.
 */
const replicationDelayMs = 300;
/** Five reads 250 ms apart: a grace of 1 s. */
const patience: LookupPatience = { attempts: 5, delayMs: 250 };
const grace = (patience.attempts - 1) * patience.delayMs;
const functions: FunctionModule = createExchangeFunctions({ lookupPatience: patience });

/** Seeded recipients are already replicated; each test has its own. */
const mailUsers = ["attr", "member", "removed", "mismatch", "abort", "fast"];
const groups: [string, string[]][] = [
  ["dl-member", []],
  ["dl-removed", ["removed"]],
  ["dl-mismatch", []],
  ["dl-abort", []],
];
const seed: TenantSeedInput = {
  recipients: [
    ...mailUsers.map((name) => ({
      Name: name,
      RecipientTypeDetails: "MailUser" as const,
      PrimarySmtpAddress: `${name}@fabrikam.example`,
      ExternalEmailAddress: `${name}@contoso.example`,
    })),
    ...groups.map(([name, members]) => ({
      Name: name,
      RecipientTypeDetails: "MailUniversalDistributionGroup" as const,
      PrimarySmtpAddress: `${name}@fabrikam.example`,
      Members: members,
    })),
  ],
};

describe.concurrent("Exchange validators right after a write (reads lag writes by 300 ms)", () => {
  let simulated: SimulatedFixture;
  beforeAll(async () => {
    simulated = await startSimulatedFixture({ seed, replicationDelayMs, behaviours: settledReplicas });
  });
  afterAll(async () => {
    await simulated.close();
  });
  const run = (name: string, params: Record<string, unknown>) =>
    functions[name]!(params, simulated.fixture.context());
  const invoke = (cmdlet: string, parameters: Record<string, unknown>) =>
    simulated.fixture.tenant.exchange.invoke(cmdlet, parameters, new AbortController().signal);
  const timed = async <T>(action: () => Promise<T>): Promise<{ outcome: T; ms: number }> => {
    const started = Date.now();
    const outcome = await action();
    return { outcome, ms: Date.now() - started };
  };
  const failure = (promise: Promise<unknown>): Promise<unknown> =>
    promise.then(
      () => {
        throw new Error("expected the function to fail");
      },
      (error: unknown) => error,
    );

  it("Test-ExchangeAttributeMatch right after Add-ExchangeSecondaryEmail passes", async () => {
    const params = { Identity: "attr", EmailAddress: "attr.alias@fabrikam.example" };
    expect(await run("Add-ExchangeSecondaryEmail", params)).toBe(true);
    // The write has not replicated: a read right now still shows the old addresses.
    expect(simulated.simulator.state.findRecipient("attr")!.EmailAddresses).not.toContain(
      "smtp:attr.alias@fabrikam.example",
    );
    expect(
      await run("Test-ExchangeAttributeMatch", {
        Identity: "attr",
        Attributes: { EmailAddresses: ["smtp:attr.alias@fabrikam.example", "SMTP:attr@fabrikam.example"] },
      }),
    ).toEqual({ complete: true, data: { Match: true, Mismatches: [] } });
  });

  it("Test-ExchangeGroupMembership right after Add-DistributionGroupMember passes", async () => {
    await invoke("Add-DistributionGroupMember", { Identity: "dl-member", Member: "member" });
    expect(
      await run("Test-ExchangeGroupMembership", { GroupIdentity: "dl-member", MemberIdentity: "member" }),
    ).toEqual({ complete: true, data: { IsMember: true, Match: true } });
  });

  it("Test-ExchangeGroupMembership with ShouldBeMember false right after a removal passes", async () => {
    await invoke("Remove-DistributionGroupMember", { Identity: "dl-removed", Member: "removed" });
    expect(
      await run("Test-ExchangeGroupMembership", {
        GroupIdentity: "dl-removed",
        MemberIdentity: "removed@fabrikam.example",
        ShouldBeMember: false,
      }),
    ).toEqual({ complete: true, data: { IsMember: false, Match: true } });
  });

  it("Test-ExchangeAttributeMatch and Test-ExchangeGroupMembership return on the first read that matches", async () => {
    const cmdlets: string[] = [];
    const exchange = simulated.fixture.tenant.exchange;
    const counting: ExchangeClient = {
      invoke: (cmdlet, parameters, signal) => {
        cmdlets.push(cmdlet);
        return exchange.invoke(cmdlet, parameters, signal);
      },
    };
    const context = simulated.fixture.context({
      tenant: { ...simulated.fixture.tenant, exchange: counting },
    });
    const attributes = { Identity: "fast", Attributes: { RecipientTypeDetails: "MailUser" } };
    expect(await functions["Test-ExchangeAttributeMatch"]!(attributes, context)).toEqual({
      complete: true,
      data: { Match: true, Mismatches: [] },
    });
    expect(cmdlets).toEqual(["Get-Recipient", "Get-MailUser"]);
    cmdlets.length = 0;
    const membership = { GroupIdentity: "dl-mismatch", MemberIdentity: "fast", ShouldBeMember: false };
    expect(await functions["Test-ExchangeGroupMembership"]!(membership, context)).toMatchObject({
      data: { Match: true },
    });
    expect(cmdlets).toEqual(["Get-DistributionGroupMember"]);
  });

  it("Test-ExchangeAttributeMatch reports a genuine mismatch with check.mismatch after the patience", async () => {
    const params = { Identity: "mismatch", Attributes: { EmailAddresses: "nobody@fabrikam.example" } };
    const failed = await timed(() => failure(run("Test-ExchangeAttributeMatch", params)));
    expect(failed.outcome).toBeInstanceOf(MatoolkitError);
    expect((failed.outcome as MatoolkitError).reason).toBe(reasonCodes.checkMismatch);
    expect((failed.outcome as MatoolkitError).message).toContain("EmailAddresses");
    expect(failed.ms).toBeGreaterThanOrEqual(grace - 20);

    const reported = await timed(() =>
      run("Test-ExchangeAttributeMatch", { ...params, FailOnMismatch: false }),
    );
    expect(reported.outcome).toEqual({
      complete: true,
      data: { Match: false, Mismatches: ["EmailAddresses"] },
    });
    expect(reported.ms).toBeGreaterThanOrEqual(grace - 20);
  });

  it("Test-ExchangeGroupMembership reports a genuine mismatch with check.membership after the patience", async () => {
    const params = { GroupIdentity: "dl-mismatch", MemberIdentity: "mismatch" };
    const failed = await timed(() => failure(run("Test-ExchangeGroupMembership", params)));
    expect(failed.outcome).toBeInstanceOf(MatoolkitError);
    expect((failed.outcome as MatoolkitError).reason).toBe(reasonCodes.checkMembership);
    expect(failed.ms).toBeGreaterThanOrEqual(grace - 20);

    const reported = await timed(() =>
      run("Test-ExchangeGroupMembership", { ...params, FailOnMismatch: false }),
    );
    expect(reported.outcome).toEqual({ complete: true, data: { IsMember: false, Match: false } });
    expect(reported.ms).toBeGreaterThanOrEqual(grace - 20);
  });

  it("an abort during the patience stops both validators at once with the abort reason", async () => {
    const patient = createExchangeFunctions({ lookupPatience: { attempts: 10, delayMs: 10_000 } });
    const calls: [string, Record<string, unknown>][] = [
      ["Test-ExchangeAttributeMatch", { Identity: "abort", Attributes: { DisplayName: "Someone Else" } }],
      ["Test-ExchangeGroupMembership", { GroupIdentity: "dl-abort", MemberIdentity: "abort" }],
    ];
    for (const [name, params] of calls) {
      const controller = new AbortController();
      const reason = new Error("job timed out");
      setTimeout(() => controller.abort(reason), 300);
      const { outcome, ms } = await timed(() =>
        failure(patient[name]!(params, simulated.fixture.context({ signal: controller.signal }))),
      );
      expect(outcome).toBe(reason);
      // Before the next lookup (10 s on), with room for a loaded machine.
      expect(ms).toBeLessThan(5_000);
    }
  });
});
