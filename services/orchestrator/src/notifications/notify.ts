// The producers live in libs/commands (issue 30): the admin API and the scheduler queue
// notifications too (a phase's approval gate), in the transaction of the change they report.
export {
  notifyBatchEnded,
  notifyMemberFailed,
  notifyPhaseEnded,
  type BatchRef,
  type EndCounts,
} from "@matoolkit/commands";
