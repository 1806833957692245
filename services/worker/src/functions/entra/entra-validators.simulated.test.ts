import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MatoolkitError, reasonCodes } from "@matoolkit/domain";
import type { TenantSeedInput } from "@matoolkit/simulated-tenant";
import {
  startSimulatedFixture,
  type SimulatedFixture,
} from "../../../test/functions/contract/simulated-fixture.ts";
import { settledReplicas } from "../../../test/functions/contract/settled-replicas.ts";
import type { GraphClient, GraphRequest } from "../../tenant/graph-client.ts";
import type { FunctionModule } from "../worker-function.ts";
import { groupPath, userPath } from "./graph-paths.ts";
import { createEntraFunctions } from "./index.ts";

/**
 * The Test-* validators used as post-write verifications: reads lag writes by 300 ms, so a
 * validator run right after the write first reads a stale replica. It must re-read within the
 * replication grace and pass, and still report a genuine mismatch once the grace has run out.
 */
const replicationDelayMs = 300;
const grace = 1_000;
const functions: FunctionModule = createEntraFunctions({ replicationGraceMs: grace });

/** Seeded objects are already replicated; each test has its own user and group. */
const users = ["attr", "member", "removed", "mismatch", "membership-mismatch", "abort", "fast"];
const seed: TenantSeedInput = {
  users: users.map((name) => ({
    id: `u-${name}`,
    userPrincipalName: `${name}@fabrikam.example`,
    displayName: name,
    department: "Sales",
  })),
  groups: [
    { id: "g-member", displayName: "member" },
    { id: "g-removed", displayName: "removed", members: ["u-removed"] },
    { id: "g-membership-mismatch", displayName: "membership mismatch" },
    { id: "g-abort", displayName: "abort" },
  ],
};

describe.concurrent("Entra validators right after a write (reads lag writes by 300 ms)", () => {
  let simulated: SimulatedFixture;
  beforeAll(async () => {
    simulated = await startSimulatedFixture({ seed, replicationDelayMs, behaviours: settledReplicas });
  });
  afterAll(async () => {
    await simulated.close();
  });
  const run = (name: string, params: Record<string, unknown>, signal?: AbortSignal) =>
    functions[name]!(params, simulated.fixture.context(signal === undefined ? {} : { signal }));
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

  it("Test-EntraAttributeMatch right after a property change passes", async () => {
    await simulated.fixture.tenant.graph.request(
      { method: "PATCH", path: userPath("u-attr"), body: { department: "Finance" } },
      new AbortController().signal,
    );
    // The write has not replicated: a read right now still shows the old value.
    expect(simulated.simulator.state.users.get("u-attr")!.department).toBe("Sales");
    expect(
      await run("Test-EntraAttributeMatch", { UserId: "u-attr", Attributes: { department: "finance" } }),
    ).toEqual({ complete: true, data: { Match: true, Mismatches: [] } });
  });

  it("Test-EntraGroupMembership right after Add-EntraGroupMember passes", async () => {
    expect(await run("Add-EntraGroupMember", { GroupId: "g-member", UserId: "u-member" })).toBe(true);
    expect(simulated.simulator.state.groups.get("g-member")!.members).toEqual([]);
    expect(await run("Test-EntraGroupMembership", { GroupId: "g-member", UserId: "u-member" })).toEqual({
      complete: true,
      data: { IsMember: true, Match: true },
    });
  });

  it("Test-EntraGroupMembership with ShouldBeMember false right after a removal passes", async () => {
    await simulated.fixture.tenant.graph.request(
      { method: "DELETE", path: groupPath("g-removed", "/members/u-removed/$ref") },
      new AbortController().signal,
    );
    expect(simulated.simulator.state.groups.get("g-removed")!.members).toEqual(["u-removed"]);
    expect(
      await run("Test-EntraGroupMembership", {
        GroupId: "g-removed",
        UserId: "u-removed",
        ShouldBeMember: false,
      }),
    ).toEqual({ complete: true, data: { IsMember: false, Match: true } });
  });

  it("Test-EntraAttributeMatch and Test-EntraGroupMembership return on the first read that matches", async () => {
    const requests: string[] = [];
    const graph = simulated.fixture.tenant.graph;
    const counting: GraphClient = {
      serviceRoot: graph.serviceRoot,
      request: <T>(request: GraphRequest, signal: AbortSignal) => {
        requests.push(`${request.method} ${request.path}`);
        return graph.request<T>(request, signal);
      },
    };
    const context = simulated.fixture.context({ tenant: { ...simulated.fixture.tenant, graph: counting } });
    const attributes = { UserId: "u-fast", Attributes: { department: "Sales" } };
    expect(await functions["Test-EntraAttributeMatch"]!(attributes, context)).toEqual({
      complete: true,
      data: { Match: true, Mismatches: [] },
    });
    expect(requests).toEqual(["GET /users/u-fast"]);
    requests.length = 0;
    const membership = { GroupId: "g-removed", UserId: "u-fast", ShouldBeMember: false };
    expect(await functions["Test-EntraGroupMembership"]!(membership, context)).toMatchObject({
      data: { Match: true },
    });
    expect(requests).toEqual([
      "GET /groups/g-removed",
      "GET /users/u-fast",
      "POST /users/u-fast/checkMemberGroups",
    ]);
  });

  it("Test-EntraAttributeMatch reports a genuine mismatch with check.mismatch after the grace", async () => {
    const params = { UserId: "u-mismatch", Attributes: { department: "Legal" } };
    const failed = await timed(() => failure(run("Test-EntraAttributeMatch", params)));
    expect(failed.outcome).toBeInstanceOf(MatoolkitError);
    expect((failed.outcome as MatoolkitError).reason).toBe(reasonCodes.checkMismatch);
    expect((failed.outcome as MatoolkitError).message).toContain("department");
    expect(failed.ms).toBeGreaterThanOrEqual(grace - 20);

    const reported = await timed(() => run("Test-EntraAttributeMatch", { ...params, FailOnMismatch: false }));
    expect(reported.outcome).toEqual({ complete: true, data: { Match: false, Mismatches: ["department"] } });
    expect(reported.ms).toBeGreaterThanOrEqual(grace - 20);
  });

  it("Test-EntraGroupMembership reports a genuine mismatch with check.membership after the grace", async () => {
    const params = { GroupId: "g-membership-mismatch", UserId: "u-membership-mismatch" };
    const failed = await timed(() => failure(run("Test-EntraGroupMembership", params)));
    expect(failed.outcome).toBeInstanceOf(MatoolkitError);
    expect((failed.outcome as MatoolkitError).reason).toBe(reasonCodes.checkMembership);
    expect(failed.ms).toBeGreaterThanOrEqual(grace - 20);

    const reported = await timed(() =>
      run("Test-EntraGroupMembership", { ...params, FailOnMismatch: false }),
    );
    expect(reported.outcome).toEqual({ complete: true, data: { IsMember: false, Match: false } });
    expect(reported.ms).toBeGreaterThanOrEqual(grace - 20);
  });

  it("an abort during the grace stops both validators at once with the abort reason", async () => {
    const patient = createEntraFunctions({ replicationGraceMs: 10_000 });
    const calls: [string, Record<string, unknown>][] = [
      ["Test-EntraAttributeMatch", { UserId: "u-abort", Attributes: { department: "Legal" } }],
      ["Test-EntraGroupMembership", { GroupId: "g-abort", UserId: "u-abort" }],
    ];
    for (const [name, params] of calls) {
      const controller = new AbortController();
      const reason = new Error("job timed out");
      setTimeout(() => controller.abort(reason), 300);
      const { outcome, ms } = await timed(() =>
        failure(patient[name]!(params, simulated.fixture.context({ signal: controller.signal }))),
      );
      expect(outcome).toBe(reason);
      // Well before the 10 s grace ends, with room for a loaded machine.
      expect(ms).toBeLessThan(5_000);
    }
  });
});
