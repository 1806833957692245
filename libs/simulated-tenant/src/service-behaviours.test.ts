import { afterEach, describe, expect, it } from "vitest";
import { concurrencyRefusalText } from "./exchange/concurrency-throttle.ts";
import {
  startSimulatedTenant,
  type SimulatedTenant,
  type SimulatedTenantOptions,
} from "./simulated-tenant.ts";

let tenant: SimulatedTenant | undefined;
let now = 1_000_000;

afterEach(async () => {
  await tenant?.close();
  tenant = undefined;
});

async function start(options: SimulatedTenantOptions = {}): Promise<SimulatedTenant> {
  now = 1_000_000;
  tenant = await startSimulatedTenant({
    now: () => now,
    seed: {
      users: [
        // mail is the address invited below: inviting an internal user needs it (prerequisite-rules.ts).
        {
          id: "u-cloud",
          userPrincipalName: "adele@fabrikam.example",
          displayName: "Adele",
          mail: "adele@contoso.example",
        },
        {
          id: "u-synced",
          userPrincipalName: "megan@fabrikam.example",
          displayName: "Megan",
          onPremisesSyncEnabled: true,
        },
      ],
      groups: [
        { id: "g-security", displayName: "Security" },
        { id: "g-mail-security", displayName: "Mail security", mailEnabled: true, securityEnabled: true },
        { id: "g-distribution", displayName: "Distribution", mailEnabled: true, securityEnabled: false },
        {
          id: "g-unified",
          displayName: "Team",
          mailEnabled: true,
          securityEnabled: false,
          groupTypes: ["Unified"],
        },
      ],
    },
    ...options,
  });
  return tenant;
}

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${tenant!.url}${path}`, {
    method,
    headers: {
      Authorization: "Bearer test",
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as any) };
}

const ref = (id: string) => ({ "@odata.id": `https://graph.microsoft.com/v1.0/directoryObjects/${id}` });
const newUser = (upn: string) => ({
  accountEnabled: true,
  displayName: upn,
  mailNickname: upn.split("@")[0],
  userPrincipalName: upn,
  passwordProfile: { password: "Secret-Pass-1" },
});

describe("replica reads", () => {
  it("flap by default: a read after a write shows the new value, then the old one, then the new one", async () => {
    // Each flapping read draws which replica answers: >= 0.5 the new version, < 0.5 the old one.
    const draws = [0.9, 0.1, 0.7];
    await start({ replicationDelayMs: 1_000, random: () => draws.shift() ?? 0.9 });
    expect((await call("PATCH", "/v1.0/users/u-cloud", { department: "Ops" })).status).toBe(204);
    const reads = [];
    for (let read = 0; read < 3; read++)
      reads.push((await call("GET", "/v1.0/users/u-cloud?$select=department")).body.department);
    expect(reads).toEqual(["Ops", null, "Ops"]);
    now += 1_000;
    expect((await call("GET", "/v1.0/users/u-cloud?$select=department")).body.department).toBe("Ops");
  });

  it("lag by one fixed delay when switched to settled", async () => {
    await start({ replicationDelayMs: 1_000, behaviours: { replicaReads: "settled" }, random: () => 0.99 });
    await call("PATCH", "/v1.0/users/u-cloud", { department: "Ops" });
    for (let read = 0; read < 3; read++)
      expect((await call("GET", "/v1.0/users/u-cloud?$select=department")).body.department).toBeNull();
    now += 1_000;
    expect((await call("GET", "/v1.0/users/u-cloud?$select=department")).body.department).toBe("Ops");
  });
});

describe("writes referring to objects created moments ago", () => {
  it("answer 404 for a member and 400 for a group the write replica has not seen, then succeed", async () => {
    await start({ behaviours: { writeLagMs: 2_000 } });
    const user = await call("POST", "/v1.0/users", newUser("new@fabrikam.example"));
    const group = await call("POST", "/v1.0/groups", {
      displayName: "New",
      mailNickname: "new",
      mailEnabled: false,
      securityEnabled: true,
    });
    // Reads see both at once (no replication delay): only the write replica lags.
    expect((await call("GET", `/v1.0/users/${user.body.id}`)).status).toBe(200);

    const member = await call("POST", "/v1.0/groups/g-security/members/$ref", ref(user.body.id));
    expect(member.status).toBe(404);
    expect(member.body.error.code).toBe("Request_ResourceNotFound");
    const toNewGroup = await call("POST", `/v1.0/groups/${group.body.id}/members/$ref`, ref("u-cloud"));
    expect(toNewGroup.status).toBe(400);
    expect(toNewGroup.body.error).toMatchObject({
      code: "Request_BadRequest",
      message: "The source resource object or one of the objects being referenced do not exist.",
    });
    expect((await call("PATCH", `/v1.0/users/${user.body.id}`, { department: "Ops" })).status).toBe(404);

    now += 2_000;
    expect((await call("POST", "/v1.0/groups/g-security/members/$ref", ref(user.body.id))).status).toBe(204);
    expect((await call("POST", `/v1.0/groups/${group.body.id}/members/$ref`, ref("u-cloud"))).status).toBe(
      204,
    );
    expect((await call("PATCH", `/v1.0/users/${user.body.id}`, { department: "Ops" })).status).toBe(204);
  });

  it("lag as long as the replication delay by default, and not at all with writeLagMs 0", async () => {
    await start({ replicationDelayMs: 500, behaviours: { replicaReads: "settled" } });
    const user = await call("POST", "/v1.0/users", newUser("lagging@fabrikam.example"));
    expect((await call("POST", "/v1.0/groups/g-security/members/$ref", ref(user.body.id))).status).toBe(404);
    tenant!.state.behaviours = { ...tenant!.state.behaviours, writeLagMs: 0 };
    expect((await call("POST", "/v1.0/groups/g-security/members/$ref", ref(user.body.id))).status).toBe(204);
  });
});

describe("mail-enabled security groups and distribution lists", () => {
  it("refuse membership changes through Graph with its 400, Microsoft 365 groups do not", async () => {
    await start();
    for (const id of ["g-mail-security", "g-distribution"]) {
      const added = await call("POST", `/v1.0/groups/${id}/members/$ref`, ref("u-cloud"));
      expect(added.status).toBe(400);
      expect(added.body.error).toMatchObject({
        code: "Request_BadRequest",
        message: "Cannot Update a mail-enabled security groups and or distribution list.",
      });
      expect((await call("DELETE", `/v1.0/groups/${id}/members/u-cloud/$ref`)).status).toBe(400);
    }
    expect(tenant!.state.groups.get("g-mail-security", "primary")!.members).toEqual([]);
    expect((await call("POST", "/v1.0/groups/g-unified/members/$ref", ref("u-cloud"))).status).toBe(204);
  });

  it("refuse to be created through Graph with its 400; security and Microsoft 365 groups are created", async () => {
    await start();
    const group = (name: string, mailEnabled: boolean, securityEnabled: boolean, groupTypes?: string[]) => ({
      displayName: name,
      mailNickname: name,
      mailEnabled,
      securityEnabled,
      ...(groupTypes === undefined ? {} : { groupTypes }),
    });
    for (const [name, securityEnabled] of [
      ["mail-security", true],
      ["distribution", false],
    ] as const) {
      const created = await call("POST", "/v1.0/groups", group(name, true, securityEnabled, []));
      expect(created.status).toBe(400);
      expect(created.body.error).toMatchObject({
        code: "Request_BadRequest",
        message: "Cannot Create a mail-enabled security groups and or distribution list.",
      });
    }
    expect(tenant!.state.groups.list("primary").map((g) => g.displayName)).not.toContain("distribution");
    expect((await call("POST", "/v1.0/groups", group("security", false, true))).status).toBe(201);
    expect((await call("POST", "/v1.0/groups", group("unified", true, false, ["Unified"]))).status).toBe(201);
  });

  it("accept them when the behaviour is switched to allowed", async () => {
    await start({ behaviours: { mailEnabledGroupMembership: "allowed" } });
    expect((await call("POST", "/v1.0/groups/g-distribution/members/$ref", ref("u-cloud"))).status).toBe(204);
    const created = await call("POST", "/v1.0/groups", {
      displayName: "list",
      mailNickname: "list",
      mailEnabled: true,
      securityEnabled: false,
    });
    expect(created.status).toBe(201);
  });
});

describe("users synced from on-premises", () => {
  it("refuse changes of synced attributes with Graph's 400, allow usageLocation and cloud users", async () => {
    await start();
    const read = await call("GET", "/v1.0/users/u-synced?$select=onPremisesSyncEnabled");
    expect(read.body.onPremisesSyncEnabled).toBe(true);
    for (const body of [
      { userPrincipalName: "megan.new@fabrikam.example" },
      { department: "Ops" },
      { passwordProfile: { password: "Secret-Pass-2" } },
    ]) {
      const refused = await call("PATCH", "/v1.0/users/u-synced", body);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: "Request_BadRequest",
        message:
          "Unable to update the specified properties for on-premises mastered Directory Sync objects or objects currently undergoing migration.",
      });
    }
    expect(tenant!.state.findUser("u-synced", "primary")!.userPrincipalName).toBe("megan@fabrikam.example");
    expect((await call("PATCH", "/v1.0/users/u-synced", { usageLocation: "NL" })).status).toBe(204);
    expect((await call("PATCH", "/v1.0/users/u-cloud", { department: "Ops" })).status).toBe(204);
  });

  it("accept them when the behaviour is switched to allowed", async () => {
    await start({ behaviours: { syncedUserWrites: "allowed" } });
    expect((await call("PATCH", "/v1.0/users/u-synced", { department: "Ops" })).status).toBe(204);
  });
});

describe("when invited users accept", () => {
  const invitation = {
    invitedUserEmailAddress: "adele@contoso.example",
    inviteRedirectUrl: "https://myapps.microsoft.com",
    invitedUser: { id: "u-cloud" },
  };
  const userState = () => tenant!.state.users.get("u-cloud", "primary")?.externalUserState;

  it("is only when they redeem, by default (Graph has no redeem API)", async () => {
    await start();
    expect((await call("POST", "/v1.0/invitations", invitation)).status).toBe(201);
    expect(userState()).toBe("PendingAcceptance");
  });

  it("is as soon as invited with inviteesRedeem at-once, while Graph still answers the invitation as created", async () => {
    await start({ behaviours: { inviteesRedeem: "at-once" } });
    const created = await call("POST", "/v1.0/invitations", invitation);
    expect(created.status).toBe(201);
    expect(created.body.status).toBe("PendingAcceptance");
    expect(userState()).toBe("Accepted");
    expect(tenant!.state.invitations.list("primary").map((i) => i.status)).toEqual(["Completed"]);
  });
});

describe("the tenant's B2B invitation setting", () => {
  const invitation = {
    invitedUserEmailAddress: "adele@contoso.example",
    inviteRedirectUrl: "https://myapps.microsoft.com",
    invitedUser: { id: "u-cloud" },
  };

  it.each(["none", "adminsAndGuestInviters"] as const)(
    "refuses the app's invitations with 403 when allowInvitesFrom is %s",
    async (allowInvitesFrom) => {
      await start({ behaviours: { allowInvitesFrom } });
      const refused = await call("POST", "/v1.0/invitations", invitation);
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe(
        "Guest invitations not allowed for your company. Contact your company administrator for more details.",
      );
      expect(tenant!.state.invitations.list("primary")).toEqual([]);
      const policy = await call("GET", "/v1.0/policies/authorizationPolicy");
      expect(policy.body.allowInvitesFrom).toBe(allowInvitesFrom);
    },
  );

  it("accepts them with the default, everyone, and after a settings change back to it", async () => {
    await start({ behaviours: { allowInvitesFrom: "none" } });
    const put = await fetch(`${tenant!.url}/_simulator/settings`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ behaviours: { allowInvitesFrom: "everyone" } }),
    });
    expect(((await put.json()) as any).behaviours.allowInvitesFrom).toBe("everyone");
    expect((await call("POST", "/v1.0/invitations", invitation)).status).toBe(201);
  });
});

describe("Exchange's per-tenant concurrency refusal", () => {
  const invoke = () =>
    fetch(`${tenant!.url}/adminapi/beta/${tenant!.tenantId}/InvokeCommand`, {
      method: "POST",
      headers: { Authorization: "Bearer test", "Content-Type": "application/json" },
      body: JSON.stringify({ CmdletInput: { CmdletName: "Get-Recipient", Parameters: {} } }),
    });

  it("answers armed requests with the service's plain-text refusal, then lets them through", async () => {
    await start();
    const armed = await fetch(`${tenant!.url}/_simulator/faults`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ api: "exchange", kind: "concurrency", count: 1 }),
    });
    expect(armed.status).toBe(204);
    const refused = await invoke();
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(refused.headers.get("retry-after")).toBeNull();
    expect(await refused.text()).toBe(concurrencyRefusalText);
    expect((await invoke()).status).toBe(200);
    expect(tenant!.exchangeConcurrency.refused).toBe(1);
  });

  it("refuses a share of requests at the configured rate", async () => {
    const draws = [0.05, 0.5, 0.01, 0.9];
    await start({ behaviours: { exchangeConcurrencyRate: 0.1 }, random: () => draws.shift() ?? 0.9 });
    const statuses = [];
    for (let request = 0; request < 4; request++) statuses.push((await invoke()).status);
    expect(statuses).toEqual([400, 200, 400, 200]);
  });
});

describe("the chaos profile", () => {
  it("sets flapping replicas, a lagging write replica and concurrency refusals, options beside it win", async () => {
    await start({ profile: "chaos", randomSeed: 7 });
    const settings = (await (await fetch(`${tenant!.url}/_simulator/settings`)).json()) as any;
    expect(settings).toMatchObject({
      replicationDelayMs: 400,
      behaviours: { replicaReads: "flapping", writeLagMs: 1_500, exchangeConcurrencyRate: 0.1 },
    });
    await tenant!.close();
    await start({ profile: "chaos", replicationDelayMs: 50, behaviours: { exchangeConcurrencyRate: 0 } });
    expect(tenant!.state.replicationDelayMs).toBe(50);
    expect(tenant!.state.behaviours.exchangeConcurrencyRate).toBe(0);
  });

  it("refuses the same requests in two runs with the same random seed", async () => {
    const pattern = async (seed: number) => {
      await start({ profile: "chaos", randomSeed: seed });
      const statuses = [];
      for (let request = 0; request < 40; request++) {
        const response = await fetch(`${tenant!.url}/adminapi/beta/${tenant!.tenantId}/InvokeCommand`, {
          method: "POST",
          headers: { Authorization: "Bearer test", "Content-Type": "application/json" },
          body: JSON.stringify({ CmdletInput: { CmdletName: "Get-Recipient", Parameters: {} } }),
        });
        statuses.push(response.status);
      }
      await tenant!.close();
      tenant = undefined;
      return statuses;
    };
    const first = await pattern(42);
    expect(first).toContain(400);
    expect(first).toContain(200);
    expect(await pattern(42)).toEqual(first);
  });
});
