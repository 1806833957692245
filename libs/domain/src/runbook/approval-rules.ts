import type { Finding } from "./problems.ts";
import type { RawMapping } from "./raw.ts";
import { asList, isMapping } from "./raw.ts";

/**
 * A phase's approval keys depend on one another (issue 30): a timeout belongs to a gate, and an
 * outcome to a timeout. Refused rather than ignored, so an author never believes a phase is gated
 * (or times out) when it is not.
 */
export function approvalFindings(root: RawMapping): Finding[] {
  const findings: Finding[] = [];
  asList(root.phases).forEach((phase, index) => {
    if (!isMapping(phase)) return;
    const path = ["phases", index];
    if (phase.approval_timeout !== undefined && phase.approval === undefined) {
      findings.push({
        path: [...path, "approval_timeout"],
        message: 'approval_timeout needs "approval: required" on the same phase',
      });
    }
    if (phase.approval_timeout_outcome !== undefined && phase.approval_timeout === undefined) {
      findings.push({
        path: [...path, "approval_timeout_outcome"],
        message:
          "approval_timeout_outcome needs approval_timeout on the same phase (without a timeout the phase waits for a decision)",
      });
    }
  });
  return findings;
}
