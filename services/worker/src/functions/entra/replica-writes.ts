import { MatoolkitError, reasonCodes } from "@matoolkit/domain";
import { graphErrorOf } from "../../tenant/graph-error-mapping.ts";
import { untilHolds } from "./replication-grace.ts";

/**
 * A write to objects the function has just read can still be answered "does not exist": the
 * directory replica that takes the write may not have seen an object created moments ago (Graph
 * answers 404 Request_ResourceNotFound, "the PATCH request went to a different node where the id
 * did not yet exist", https://blogs.aaddevsup.xyz/2021/08/why-do-i-sometimes-get-a-404-when-trying-to-update-an-azure-directory-object-after-i-just-created-it/;
 * for a group created moments ago, adding a member answers 400 "The source resource object or one
 * of the objects being referenced do not exist.", https://learn.microsoft.com/graph/api/group-post-members).
 * So such an answer is replication lag, not a missing object: the write is sent again through
 * the replication grace, then the step fails retryably with graph.replication_lag (the runbook's
 * retry policy tries again later) instead of permanently with graph.not_found.
 */
export async function writeThroughReplicationLag(
  functionName: string,
  write: () => Promise<void>,
  graceMs: number,
  signal: AbortSignal,
): Promise<void> {
  const attempt = async (): Promise<"done" | "lagging"> => {
    try {
      await write();
      return "done";
    } catch (error) {
      if (isNotReplicated(error)) return "lagging";
      throw error;
    }
  };
  const outcome = await untilHolds(attempt, (result) => result === "done", graceMs, signal);
  if (outcome === "lagging") {
    throw new MatoolkitError(
      reasonCodes.graphReplicationLag,
      `${functionName}: Graph did not yet know an object the step had just read (created moments ago, not yet replicated to the server taking the write); retry later`,
    );
  }
}

function isNotReplicated(error: unknown): boolean {
  const info = graphErrorOf(error);
  if (info === undefined) return false;
  return (
    info.status === 404 ||
    (info.status === 400 && /objects being referenced do not exist/i.test(info.message))
  );
}
