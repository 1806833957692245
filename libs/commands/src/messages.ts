// The envelopes live with the message schemas (libs/domain/src/messages/envelopes.ts); these names
// are kept for the callers that queue orchestrator events through libs/commands.
export {
  batchInitEnvelope as batchInitMessage,
  memberAddedEnvelope as memberAddedMessage,
  memberRemovedEnvelope as memberRemovedMessage,
  phaseDueEnvelope as phaseDueMessage,
} from "@matoolkit/domain";
