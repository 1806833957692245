/**
 * deploy/aca's Bicep against the Azure resource schemas, without the Bicep compiler (none runs
 * here: no .NET, no network; no official Bicep parser or compiler is published on npm). Every
 * resource body is parsed (testing/bicep-syntax/) and checked against the request body model of
 * its type's create operation in a pinned @azure/arm-* SDK (testing/arm-schema/coverage.ts):
 * unknown or read-only property, missing required property, literal of the wrong type, closed
 * enum value not allowed, api version other than the one checked. And no module's `outputs` may
 * be passed whole (Azure/bicep#16792). What stays unchecked: deploy/README.md, "Bicep checks".
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkBicepFiles, type BicepFileText } from "./testing/arm-schema/check-bicep.ts";
import { SDK_SCHEMAS, UNCOVERED } from "./testing/arm-schema/coverage.ts";

const root = join(import.meta.dirname, "..", "..");
const realFiles: BicepFileText[] = [
  "deploy/aca/main.bicep",
  ...readdirSync(join(root, "deploy/aca/modules"))
    .filter((name) => name.endsWith(".bicep"))
    .map((name) => `deploy/aca/modules/${name}`),
].map((path) => ({ path, text: readFileSync(join(root, path), "utf8") }));
const real = checkBicepFiles(root, realFiles);

/** The problems of one file, the real one with `from` replaced by `to`. */
function checkVariant(path: string, from: string, to: string): string[] {
  const text = readFileSync(join(root, path), "utf8");
  if (!text.includes(from)) throw new Error(`${path} no longer contains ${from}: update the fixture`);
  return checkBicepFiles(root, [{ path, text: text.replace(from, to) }]).problems;
}

function check(text: string): string[] {
  return checkBicepFiles(root, [{ path: "fixture.bicep", text }]).problems;
}

describe("deploy/aca Bicep against the resource schemas", () => {
  it("every resource of the real files matches its type's schema and api version", () => {
    const schemaProblems = real.problems.filter((problem) => !problem.includes(".outputs' passes module"));
    expect(schemaProblems).toEqual([]);
  });

  it("the real files pass no module's outputs whole (Azure/bicep#16792)", () => {
    expect(real.problems.filter((problem) => problem.includes(".outputs' passes module"))).toEqual([]);
  });

  // One test per resource type: the test output lists what each is checked against.
  for (const [type, against] of real.checked) {
    it(`checks ${type} against ${against}`, () => expect(SDK_SCHEMAS.has(type.split("@")[0]!)).toBe(true));
  }

  it("leaves no resource type of the real files unchecked (UNCOVERED lists the exceptions)", () => {
    expect([...real.uncovered.keys()]).toEqual(
      [...UNCOVERED.keys()].filter((type) => real.uncovered.has(type)),
    );
    expect(real.checked.size).toBeGreaterThanOrEqual(20);
  });

  it("pins each SDK in package.json at the version whose models are checked", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    for (const schema of SDK_SCHEMAS.values())
      expect(manifest.devDependencies[schema.sdk]).toBe(schema.sdkVersion);
  });
});

describe("what the schema check catches", () => {
  it("a misspelled addressPrefixes in network.bicep, with file, line, resource, path and the right name", () => {
    expect(checkVariant("deploy/aca/modules/network.bicep", "addressPrefixes:", "adressPrefixes:")).toEqual([
      "deploy/aca/modules/network.bicep:21: resource vnet 'Microsoft.Network/virtualNetworks@2024-05-01': " +
        "properties.addressSpace.adressPrefixes: unknown property 'adressPrefixes' in AddressSpace; " +
        "closest valid names: 'addressPrefixes', 'ipamPoolPrefixAllocations'",
    ]);
  });

  it("a misspelled field of the generated alerts.bicep, down to the AlertingAction's trigger", () => {
    const path = "deploy/aca/modules/alerts.bicep";
    const text = readFileSync(join(root, path), "utf8")
      .replace("thresholdOperator: 'GreaterThan'", "thresholdOperater: 'GreaterThan'")
      .replace("queryType: 'ResultCount'", "queryTyp: 'ResultCount'");
    const problems = checkBicepFiles(root, [{ path, text }]).problems;
    expect(problems).toEqual([
      expect.stringMatching(/properties\.source\.queryTyp: unknown property 'queryTyp' in Source/),
      expect.stringMatching(
        /properties\.action\.trigger\.thresholdOperater: unknown property 'thresholdOperater' in TriggerCondition/,
      ),
      expect.stringMatching(
        /properties\.action\.trigger: required property 'thresholdOperator' of TriggerCondition is missing/,
      ),
    ]);
  });

  it("a read-only property set in a subnet of network.bicep", () => {
    const problems = checkVariant(
      "deploy/aca/modules/network.bicep",
      "privateEndpointNetworkPolicies: 'Disabled'",
      "privateEndpointNetworkPolicies: 'Disabled'\n          provisioningState: 'Succeeded'",
    );
    expect(problems).toEqual([
      "deploy/aca/modules/network.bicep:41: resource vnet 'Microsoft.Network/virtualNetworks@2024-05-01': " +
        "properties.subnets[].properties.provisioningState: 'provisioningState' is read-only in Subnet.properties: " +
        "Azure sets it, a template cannot",
    ]);
  });

  it("a literal of the wrong type, a closed enum's unknown value and a missing required property", () => {
    const vault = "deploy/aca/modules/key-vault.bicep";
    expect(checkVariant(vault, "enableRbacAuthorization: true", "enableRbacAuthorization: 'true'")).toEqual([
      expect.stringContaining("properties.enableRbacAuthorization: a string where the model wants a bool"),
    ]);
    expect(checkVariant(vault, "name: 'standard' }", "name: 'standart' }")).toEqual([
      expect.stringContaining("properties.sku.name: 'standart' is not one of 'standard', 'premium'"),
    ]);
    expect(checkVariant(vault, "sku: { family: 'A', name: 'standard' }", "sku: { family: 'A' }")).toEqual([
      expect.stringContaining("properties.sku: required property 'name' of Sku is missing"),
    ]);
  });

  it("an api version other than the one the schema is for", () => {
    expect(
      checkVariant(
        "deploy/aca/modules/network.bicep",
        "virtualNetworks@2024-05-01",
        "virtualNetworks@2023-09-01",
      ),
    ).toEqual([
      expect.stringContaining(
        "api version 2023-09-01, but the schema checked is @azure/arm-network 33.5.0 for 2024-05-01",
      ),
    ]);
  });

  it("a correct file passes", () => {
    const network = realFiles.find((file) => file.path.endsWith("network.bicep"))!;
    expect(checkBicepFiles(root, [network]).problems).toEqual([]);
  });

  it("walks loops, conditions, both branches of a ternary and nested child resources", () => {
    const problems = check(`
param names array
param external bool
resource vnet 'Microsoft.Network/virtualNetworks@2024-05-01' = {
  name: 'vnet'
  location: 'westeurope'
  properties: { addressSpace: { addressPrefixes: ['10.0.0.0/16'] } }
  resource subnet 'subnets' = {
    name: 'a'
    properties: { adressPrefix: '10.0.0.0/24' }
  }
}
resource zones 'Microsoft.Network/privateDnsZones@2020-06-01' = [for zone in names: if (external) {
  name: zone
  location: 'global'
  tag: {}
}]
resource endpoint 'Microsoft.Network/privateEndpoints@2024-05-01' = {
  name: 'pe'
  location: 'westeurope'
  properties: { subnet: external ? { id: 'x' } : { ids: 'y' } }
}`);
    expect(problems).toEqual([
      expect.stringMatching(
        /^fixture\.bicep:10: resource subnet 'Microsoft\.Network\/virtualNetworks\/subnets@2024-05-01': properties\.adressPrefix: unknown/,
      ),
      expect.stringMatching(
        /^fixture\.bicep:16: resource zones .*: tag: unknown property 'tag' in PrivateZone; closest valid names: 'tags'/,
      ),
      expect.stringMatching(
        /^fixture\.bicep:21: resource endpoint .*: properties\.subnet\.ids: unknown property 'ids' in Subnet; closest valid names: 'id'/,
      ),
    ]);
  });

  it("properties other than name, parent and scope on an existing resource", () => {
    expect(
      check(`resource ws 'Microsoft.OperationalInsights/workspaces@2022-10-01' existing = {
  name: 'log'
  location: 'westeurope'
}`),
    ).toEqual([
      expect.stringContaining(
        "fixture.bicep:3: resource ws 'Microsoft.OperationalInsights/workspaces@2022-10-01': location: an existing resource takes only name, parent and scope",
      ),
    ]);
  });

  it("text it cannot read, with the line", () => {
    expect(
      check(
        "resource vnet 'Microsoft.Network/virtualNetworks@2024-05-01' = {\n  name: 'a'\n  properties: { ]\n}",
      ),
    ).toEqual(["fixture.bicep: not readable as Bicep: expected a property name on line 3, found ']'"]);
  });

  it("a resource type that is neither checked nor listed as uncovered", () => {
    expect(check(`resource site 'Microsoft.Web/sites@2023-12-01' = {\n  name: 'x'\n}`)).toEqual([
      "fixture.bicep:1: resource site 'Microsoft.Web/sites@2023-12-01': type not checked: add it to SDK_SCHEMAS or, " +
        "with the reason, to UNCOVERED (deploy/aca/testing/arm-schema/coverage.ts)",
    ]);
  });
});

describe("whole module outputs (Azure/bicep#16792)", () => {
  const fixture = `module foundation 'foundation.bicep' = {
  name: 'stage1'
}
module apps 'apps.bicep' = {
  name: 'stage2'
  params: {
    registry: foundation.outputs.registryName
    keyVault: foundation.outputs['keyVaultName']
    foundation: foundation.outputs
  }
}
var everything = apps.outputs
output name string = apps.outputs.environmentName
`;

  it("reports every whole use with its line, and no use of a single output", () => {
    const problems = check(fixture);
    expect(problems.map((problem) => problem.split(": ")[0])).toEqual([
      "fixture.bicep:9",
      "fixture.bicep:12",
    ]);
    expect(problems[0]).toContain("'foundation.outputs' passes module foundation's outputs whole");
    expect(problems[0]).toContain("pass each output (foundation.outputs.<name>) instead");
  });

  it("passes the same modules given output by output", () => {
    const fixed = fixture
      .replace("foundation: foundation.outputs", "foundationName: foundation.outputs.name")
      .replace("var everything = apps.outputs", "var everything = apps.outputs.name");
    expect(check(fixed)).toEqual([]);
  });
});
