import { reasonCodes } from "@matoolkit/domain";
import { describe, expect, it } from "vitest";
import { graphRefusalOf } from "./graph-refusals.ts";

// The texts as the simulated tenant answers them (libs/simulated-tenant/src/graph/group-write-rules.ts
// cites where each was captured from the real service).
describe("Graph refusals of mail-enabled groups", () => {
  it("reads a refused membership change and a refused creation as graph.mail_enabled_group, each naming Exchange", () => {
    const update = graphRefusalOf(
      400,
      "Cannot Update a mail-enabled security groups and or distribution list.",
    );
    const create = graphRefusalOf(
      400,
      "Cannot Create a mail-enabled security groups and or distribution list.",
    );
    expect(update).toMatchObject({ reason: reasonCodes.graphMailEnabledGroup });
    expect(update!.explanation).toMatch(/Add-DistributionGroupMember/);
    expect(create).toMatchObject({ reason: reasonCodes.graphMailEnabledGroup });
    expect(create!.explanation).toMatch(/New-DistributionGroup/);
  });

  it("leaves another 400 alone", () => {
    expect(
      graphRefusalOf(400, "Invalid value specified for property 'mailNickname' of resource 'Group'."),
    ).toBe(undefined);
    expect(
      graphRefusalOf(403, "Cannot Create a mail-enabled security groups and or distribution list."),
    ).toBe(undefined);
  });
});
