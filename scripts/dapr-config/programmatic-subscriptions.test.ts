import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  announceSubscriptions,
  notificationsSubscription,
  orchestratorEventsSubscription,
  workerJobsSubscription,
  workerResultsSubscription,
} from "@matoolkit/runtime";
import { daprSubscriptions } from "./dapr-conventions.ts";
import { loadDaprFiles } from "./load-dapr-files.ts";

/**
 * The declarative subscriptions in dapr/subscriptions and the conventions table must say exactly
 * what the apps' code answers on GET /dapr/subscribe, or one of them would route differently.
 */
const announced = [
  ...announceSubscriptions({
    pubsubName: "matoolkit-pubsub",
    subscriptions: [orchestratorEventsSubscription, workerResultsSubscription, notificationsSubscription],
    catchAllTopics: [],
  }).map((entry) => ({ appId: "matoolkit-orchestrator", ...entry })),
  ...announceSubscriptions({
    pubsubName: "matoolkit-pubsub",
    subscriptions: [workerJobsSubscription("worker-01")],
    catchAllTopics: [],
  }).map((entry) => ({ appId: "matoolkit-worker", ...entry })),
];

describe("programmatic subscriptions", () => {
  it("match the conventions table", () => {
    const normalize = (entry: {
      appId: string;
      topic: string;
      routes: { readonly rules?: readonly unknown[]; readonly default?: string };
      deadLetterTopic: string;
    }) => ({
      appId: entry.appId,
      topic: entry.topic,
      rules: entry.routes.rules ?? [],
      default: entry.routes.default,
      deadLetterTopic: entry.deadLetterTopic,
    });
    expect(announced.map(normalize)).toEqual(daprSubscriptions.map(normalize));
  });

  it("match the declarative twins in dapr/subscriptions", async () => {
    const root = resolve(import.meta.dirname, "..", "..");
    const files = (await loadDaprFiles(root)).filter((file) => file.file.startsWith("dapr/subscriptions/"));
    const declared = files.map((file) => {
      const doc = file.value as {
        spec: {
          pubsubname: string;
          topic: string;
          routes: { readonly rules?: readonly unknown[]; readonly default?: string };
          deadLetterTopic: string;
        };
        scopes: string[];
      };
      return {
        appId: doc.scopes[0],
        pubsubname: doc.spec.pubsubname,
        topic: doc.spec.topic,
        routes: { rules: doc.spec.routes.rules ?? [], default: doc.spec.routes.default },
        deadLetterTopic: doc.spec.deadLetterTopic,
      };
    });
    const sortKey = (entry: { appId?: string; topic: string }) => `${entry.appId}/${entry.topic}`;
    expect(declared.sort((a, b) => sortKey(a).localeCompare(sortKey(b)))).toEqual(
      announced.sort((a, b) => sortKey(a).localeCompare(sortKey(b))),
    );
  });
});
