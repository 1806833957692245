import type { MemberStatus } from "@matoolkit/domain";
import type { Insertable, Selectable, Updateable, GeneratedAlways } from "kysely";
import type {
  CreatedAt,
  JsonColumnWithDefault,
  JsonObject,
  NullableTimestamp,
  StatusColumn,
} from "./column-types.ts";

export interface BatchMembersTable {
  id: GeneratedAlways<number>;
  batchId: number;
  /** The member's primary key value in the data source. */
  memberKey: string;
  /** Snapshot of the member's data source row (refreshed each scheduler tick). */
  dataJson: JsonColumnWithDefault<JsonObject>;
  /** Accumulated `output_params` of the member's steps. */
  workerDataJson: JsonColumnWithDefault<JsonObject>;
  status: StatusColumn<MemberStatus>;
  addedAt: CreatedAt;
  removedAt: NullableTimestamp;
  failedAt: NullableTimestamp;
  addDispatchedAt: NullableTimestamp;
  removeDispatchedAt: NullableTimestamp;
  /** When this member's data was erased on a data-subject request (migration 0019); null before. */
  erasedAt: NullableTimestamp;
}

export type BatchMember = Selectable<BatchMembersTable>;
export type NewBatchMember = Insertable<BatchMembersTable>;
export type BatchMemberUpdate = Updateable<BatchMembersTable>;
