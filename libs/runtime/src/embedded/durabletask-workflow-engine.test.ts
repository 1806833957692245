import { describeWorkflowEngineContract } from "../../test/contract/index.ts";
import { createLogger } from "../logger.ts";
import { createDurableTaskWorkflowEngine } from "./durabletask-workflow-engine.ts";

describeWorkflowEngineContract("embedded (durabletask in-memory)", async () =>
  createDurableTaskWorkflowEngine({ logger: createLogger({ level: "silent", name: "workflow-test" }) }),
);
