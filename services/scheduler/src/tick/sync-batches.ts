import {
  enqueueOutbox,
  holdRunbookVersionIfActive,
  insertMembersOfNewBatches,
  listInFlightAutomatedBatches,
  listUnassignedGroups,
  queueJoinedMembers,
  removeMembersMissingFromSource,
  setExternalRefFromMembers,
  type Db,
  type Runbook,
} from "@matoolkit/db";
import { externalRefColumnOf, type RunbookDefinition } from "@matoolkit/domain";
import { memberAddedMessage, memberRemovedMessage, stageRows, type SourceRow } from "@matoolkit/commands";
import { createAutomatedBatch } from "./create-batch.ts";

export interface SyncResult {
  readonly sourceRows: number;
  /** In start time order. */
  readonly createdBatchIds: readonly number[];
  /** New groups left alone because automation is off for the runbook. */
  readonly groupsNotCreated: number;
  readonly membersAdded: number;
  readonly membersRemoved: number;
  readonly membersRefreshed: number;
}

/**
 * One transaction per runbook (000 "Timer Lifecycle" d–e): stage the source rows (a bad row
 * throws and rolls everything back), diff the members of every in-flight automated batch
 * (member-added, data_json refresh, member-removed) and create the batches of new groups when
 * automation is on. Every message goes to the outbox in this transaction, so a member is marked
 * added/removed exactly when its message is sent; they are queued a page of members at a time
 * (member-removed first), never all held at once.
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
    const createBatch = (batchStart: Date) => createAutomatedBatch(trx, runbook, batchStart, now);
    const staged = await stageRows(trx, runbook.row.name, runbook.definition.dataSource, rows, now, {
      sync: { batchIds: inFlightIds, now },
      ...(options.automationEnabled ? { createBatch } : {}),
    });

    const membersRemoved = await removeMembersMissingFromSource(trx, inFlightIds, now, async (members) => {
      await enqueueOutbox(
        trx,
        members.map((member) =>
          memberRemovedMessage({
            BatchId: member.batchId,
            MemberKey: member.memberKey,
            BatchMemberId: member.id,
          }),
        ),
      );
    });
    await queueJoinedMembers(trx, async (members) => {
      await enqueueOutbox(
        trx,
        members.map((member) =>
          memberAddedMessage({
            BatchId: member.batchId,
            MemberKey: member.memberKey,
            BatchMemberId: member.id,
          }),
        ),
      );
    });

    // Rows still without a batch: immediate mode's newcomers (scheduled mode's batches were
    // created as their first rows came), or any group while automation is off.
    const groups = staged.unassignedRows === 0 ? [] : await listUnassignedGroups(trx);
    const created = [...staged.createdBatches];
    if (options.automationEnabled) {
      const late: { batchId: number; batchStart: Date }[] = [];
      for (const group of groups) {
        late.push({ batchId: await createBatch(group.batchStart), batchStart: group.batchStart });
      }
      await insertMembersOfNewBatches(trx, late);
      created.push(...late);
    }
    await stampExternalRefs(trx, runbook.definition, created);
    return {
      sourceRows: staged.count,
      createdBatchIds: created
        .sort((a, b) => a.batchStart.getTime() - b.batchStart.getTime() || a.batchId - b.batchId)
        .map((batch) => batch.batchId),
      groupsNotCreated: options.automationEnabled ? 0 : groups.length,
      membersAdded: staged.membersJoined,
      membersRemoved,
      membersRefreshed: staged.membersRefreshed,
    };
  });
}

/**
 * Issue 31: a new batch's externalRef from its members' `data_source.external_ref_column`, now
 * that every one of them is inserted (the first member's non-empty valid value: domain
 * externalRefFromRows). Only at creation: a reference does not change under a running batch when
 * later rows carry another ticket.
 */
async function stampExternalRefs(
  trx: Db,
  definition: RunbookDefinition,
  created: readonly { readonly batchId: number }[],
): Promise<void> {
  const column = externalRefColumnOf(definition);
  if (column === undefined) return;
  for (const { batchId } of created) await setExternalRefFromMembers(trx, batchId, column);
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
