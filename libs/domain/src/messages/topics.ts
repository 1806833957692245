/** 000 "Service Bus Architecture": three topics, and the application properties used to route. */
export const topics = {
  orchestratorEvents: "orchestrator-events",
  workerJobs: "worker-jobs",
  workerResults: "worker-results",
  /** Not in 000: webhook notifications (issue 12), consumed by the orchestrator's notifier. */
  notifications: "notifications",
} as const;
export type Topic = (typeof topics)[keyof typeof topics];

export const routingProperties = {
  messageType: "MessageType",
  workerId: "WorkerId",
} as const;
