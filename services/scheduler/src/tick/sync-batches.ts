import {
  enqueueOutbox,
  holdRunbookVersionIfActive,
  insertMembersNewToBatches,
  listInFlightAutomatedBatches,
  listUnassignedGroups,
  refreshMemberData,
  removeMembersMissingFromSource,
  type Db,
  type OutboxMessage,
  type Runbook,
} from "@matoolkit/db";
import type { RunbookDefinition } from "@matoolkit/domain";
import { memberAddedMessage, memberRemovedMessage } from "@matoolkit/commands";
import type { SourceRow } from "../source/source-rows.ts";
import { createAutomatedBatch } from "./create-batch.ts";
import { stageRows } from "./stage-rows.ts";

export interface SyncResult {
  readonly sourceRows: number;
  readonly createdBatchIds: readonly number[];
  /** New groups left alone because automation is off for the runbook. */
  readonly groupsNotCreated: number;
  readonly membersAdded: number;
  readonly membersRemoved: number;
  readonly membersRefreshed: number;
}

/** Outbox rows per INSERT: 5 bind parameters each, far below PostgreSQL's 65,535 limit. */
const OUTBOX_CHUNK = 1000;

/**
 * One transaction per runbook (000 "Timer Lifecycle" d–e): stage the source rows (a bad row
 * throws and rolls everything back), diff the
 * members of every in-flight automated batch (member-removed, member-added, data_json refresh)
 * and create the batches of new groups when automation is on. Every message goes to the outbox
 * in this transaction, so a member is marked added/removed exactly when its message is sent.
 */
export async function syncBatches(
  db: Db,
  runbook: { readonly row: Runbook; readonly definition: RunbookDefinition },
  /** Pulled as it is staged (the data source's stream); an error it throws rolls everything back. */
  rows: AsyncIterable<SourceRow> | Iterable<SourceRow>,
  options: { readonly automationEnabled: boolean; readonly now: Date },
): Promise<SyncResult> {
  const { now } = options;
  return db.transaction().execute(async (trx) => {
    // Deactivated since the tick read it: nothing to sync (the caller closes the source).
    if (!(await holdRunbookVersionIfActive(trx, runbook.row.id))) return nothingSynced;
    const inFlightIds = (await listInFlightAutomatedBatches(trx, runbook.row.name)).map((batch) => batch.id);
    const staged = await stageRows(trx, runbook.row.name, runbook.definition.dataSource, rows, now);

    const removed = await removeMembersMissingFromSource(trx, inFlightIds, now);
    const added = await insertMembersNewToBatches(trx, inFlightIds, now);
    const membersRefreshed = await refreshMemberData(trx, inFlightIds);
    const messages: OutboxMessage[] = [
      ...removed.map((member) =>
        memberRemovedMessage({
          BatchId: member.batchId,
          MemberKey: member.memberKey,
          BatchMemberId: member.id,
        }),
      ),
      ...added.map((member) =>
        memberAddedMessage({
          BatchId: member.batchId,
          MemberKey: member.memberKey,
          BatchMemberId: member.id,
        }),
      ),
    ];
    for (let start = 0; start < messages.length; start += OUTBOX_CHUNK) {
      await enqueueOutbox(trx, messages.slice(start, start + OUTBOX_CHUNK));
    }

    const groups = await listUnassignedGroups(trx);
    const createdBatchIds: number[] = [];
    if (options.automationEnabled) {
      for (const group of groups) createdBatchIds.push(await createAutomatedBatch(trx, runbook, group, now));
    }
    return {
      sourceRows: staged.count,
      createdBatchIds,
      groupsNotCreated: options.automationEnabled ? 0 : groups.length,
      membersAdded: added.length,
      membersRemoved: removed.length,
      membersRefreshed,
    };
  });
}

/** A sync that read nothing and changed nothing (also process-runbook's base when skipped). */
export const nothingSynced: SyncResult = {
  sourceRows: 0,
  createdBatchIds: [],
  groupsNotCreated: 0,
  membersAdded: 0,
  membersRemoved: 0,
  membersRefreshed: 0,
};
