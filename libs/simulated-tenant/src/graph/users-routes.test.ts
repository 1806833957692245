import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startSimulatedTenant, type SimulatedTenant } from "../simulated-tenant.ts";

let tenant: SimulatedTenant;
let now = 1_000_000;

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${tenant.url}${path}`, {
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

const newUser = (upn: string) => ({
  accountEnabled: true,
  displayName: "Adele Vance",
  mailNickname: "adele",
  userPrincipalName: upn,
  passwordProfile: { password: "Str0ng!Passw0rd", forceChangePasswordNextSignIn: true },
});

beforeEach(async () => {
  now = 1_000_000;
  tenant = await startSimulatedTenant({
    now: () => now,
    seed: {
      users: [
        { id: "u-1", userPrincipalName: "megan@fabrikam.example", displayName: "Megan", department: "Sales" },
      ],
    },
  });
});
afterEach(async () => {
  await tenant.close();
});

describe("simulated Graph /users", () => {
  it("reads a user by id or UPN with Graph's context and default properties", async () => {
    const byUpn = await call("GET", "/v1.0/users/MEGAN%40fabrikam.example");
    expect(byUpn.status).toBe(200);
    expect(byUpn.body["@odata.context"]).toBe("https://graph.microsoft.com/v1.0/$metadata#users/$entity");
    expect(byUpn.body).toMatchObject({
      id: "u-1",
      displayName: "Megan",
      businessPhones: [],
      mobilePhone: null,
    });
    // department is not a default property of v1.0.
    expect(byUpn.body).not.toHaveProperty("department");
    const byId = await call("GET", "/v1.0/users/u-1");
    expect(byId.body.userPrincipalName).toBe("megan@fabrikam.example");
  });

  it("honours $select case-insensitively and refuses an unknown property with 400", async () => {
    const selected = await call("GET", "/v1.0/users/u-1?$select=Department,userPrincipalName");
    expect(selected.body).toEqual({
      "@odata.context":
        "https://graph.microsoft.com/v1.0/$metadata#users(id,department,userPrincipalName)/$entity",
      id: "u-1",
      department: "Sales",
      userPrincipalName: "megan@fabrikam.example",
    });
    const unknown = await call("GET", "/v1.0/users/u-1?$select=shoeSize");
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe("BadRequest");
    expect(unknown.body.error.message).toContain("shoeSize");
  });

  it("answers 404 Request_ResourceNotFound in Graph's shape for an unknown user", async () => {
    const missing = await call("GET", "/v1.0/users/nobody%40fabrikam.example");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("Request_ResourceNotFound");
    expect(missing.body.error.message).toMatch(/^Resource '.+' does not exist/);
    expect(missing.body.error.innerError["request-id"]).toBeTypeOf("string");
  });

  it("lists users as a { value } collection", async () => {
    const list = await call("GET", "/beta/users?$select=id");
    expect(list.body).toEqual({
      "@odata.context": "https://graph.microsoft.com/beta/$metadata#users(id)",
      value: [{ id: "u-1" }],
    });
  });

  it("creates a user (201), records the change without the password, and refuses a duplicate UPN", async () => {
    const created = await call("POST", "/v1.0/users", newUser("adele@fabrikam.example"));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      userPrincipalName: "adele@fabrikam.example",
      displayName: "Adele Vance",
    });
    const change = tenant.state.changes().at(-1)!;
    expect(change).toMatchObject({
      api: "graph",
      operation: "POST /v1.0/users",
      target: "adele@fabrikam.example",
    });
    expect(change.detail).not.toContain("Str0ng");

    const duplicate = await call("POST", "/v1.0/users", newUser("ADELE@fabrikam.example"));
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.error.code).toBe("Request_BadRequest");
    expect(duplicate.body.error.details).toEqual([
      expect.objectContaining({ code: "ObjectConflict", target: "userPrincipalName" }),
    ]);
  });

  it("refuses a create missing a required property, a weak password or an unverified domain", async () => {
    const { mailNickname: _, ...withoutNickname } = newUser("a@fabrikam.example");
    const missing = await call("POST", "/v1.0/users", withoutNickname);
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain("mailNickname");
    const weak = await call("POST", "/v1.0/users", {
      ...newUser("b@fabrikam.example"),
      passwordProfile: { password: "abc" },
    });
    expect(weak.body.error.details[0].code).toBe("PasswordViolation");
    const domain = await call("POST", "/v1.0/users", newUser("c@contoso.example"));
    expect(domain.status).toBe(400);
    expect(domain.body.error.details[0].target).toBe("userPrincipalName");
    expect(tenant.state.users.list("primary")).toHaveLength(1);
  });

  it("hides a new user from reads until replicated, but checks uniqueness and writes on the primary", async () => {
    tenant.state.replicationDelayMs = 500;
    // One fixed lag, and writes that find the user (the default flaps and lags writes too).
    tenant.state.behaviours = { ...tenant.state.behaviours, replicaReads: "settled", writeLagMs: 0 };
    const created = await call("POST", "/v1.0/users", newUser("late@fabrikam.example"));
    expect((await call("GET", "/v1.0/users/late%40fabrikam.example")).status).toBe(404);
    expect((await call("POST", "/v1.0/users", newUser("late@fabrikam.example"))).status).toBe(400);
    expect((await call("PATCH", `/v1.0/users/${created.body.id}`, { department: "Ops" })).status).toBe(204);
    now += 500;
    const read = await call("GET", `/v1.0/users/${created.body.id}?$select=department`);
    expect(read.body.department).toBe("Ops");
  });

  it("updates a UPN with PATCH (204) and refuses one another user holds", async () => {
    await call("POST", "/v1.0/users", newUser("adele@fabrikam.example"));
    const taken = await call("PATCH", "/v1.0/users/u-1", { userPrincipalName: "adele@fabrikam.example" });
    expect(taken.status).toBe(400);
    expect(taken.body.error.details[0].code).toBe("ObjectConflict");
    const renamed = await call("PATCH", "/v1.0/users/u-1", { userPrincipalName: "megan.b@fabrikam.example" });
    expect(renamed.status).toBe(204);
    expect((await call("GET", "/v1.0/users/megan.b%40fabrikam.example")).body.id).toBe("u-1");
    const readOnly = await call("PATCH", "/v1.0/users/u-1", { proxyAddresses: ["smtp:x@fabrikam.example"] });
    expect(readOnly.status).toBe(400);
  });

  it("deletes a user (204), then answers 404", async () => {
    expect((await call("DELETE", "/v1.0/users/u-1")).status).toBe(204);
    expect((await call("GET", "/v1.0/users/u-1")).status).toBe(404);
    expect((await call("DELETE", "/v1.0/users/u-1")).status).toBe(404);
  });
});
