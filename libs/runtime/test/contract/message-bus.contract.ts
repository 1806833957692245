import { randomUUID } from "node:crypto";
import { NonRetriableError, reasonCodes, topics } from "@matoolkit/domain";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_DELIVERY_ATTEMPTS } from "../../src/ports/index.ts";
import type { Delivery, MessageBus } from "../../src/ports/index.ts";

export interface BusUnderTest {
  readonly bus: MessageBus;
  /** Stops the bus and releases whatever the factory created. */
  cleanup(): Promise<void>;
}

/**
 * Routing properties other than MessageType must also be body fields of the same name (as every
 * 000 message filtered on WorkerId is): Dapr delivers the CloudEvent, not broker properties.
 *
 * The behaviour every MessageBus adapter must show (000 "Service Bus Architecture"), run against
 * each adapter (embedded pg-boss, Dapr), the kysely/inngest way. `makeBus` returns a new,
 * independent instance on the SAME broker each time (a second process): several cases need two.
 * Adapters must redeliver a failed message quickly here (tiny retry delay), or the dead-letter
 * case times out. Every case uses fresh subscription names and message ids, so cases can share a
 * broker and run in any order.
 */
export function describeMessageBusContract(adapterName: string, makeBus: () => Promise<BusUnderTest>): void {
  describe(`MessageBus contract: ${adapterName}`, () => {
    const opened: BusUnderTest[] = [];
    const open = async (): Promise<MessageBus> => {
      const instance = await makeBus();
      opened.push(instance);
      return instance.bus;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((instance) => instance.cleanup()));
    });

    const unique = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;
    const settle = (ms = 500): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    const waitUntil = (assertion: () => void | Promise<void>, timeout = 10_000) =>
      vi.waitFor(assertion, { timeout, interval: 25 });

    function recorder() {
      const deliveries: Delivery[] = [];
      return { deliveries, handler: async (delivery: Delivery) => void deliveries.push(delivery) };
    }

    it("delivers a published message with its id, body and properties", async () => {
      const bus = await open();
      const name = unique("orchestrator");
      const { deliveries, handler } = recorder();
      await bus.subscribe({ topic: topics.orchestratorEvents, name }, handler);

      const id = randomUUID();
      const body = { BatchId: 42, RunbookName: "contoso-mailbox-migration", RunbookVersion: 3 };
      await bus.publish({
        id,
        topic: topics.orchestratorEvents,
        properties: { MessageType: "batch-init" },
        body,
      });

      await waitUntil(() => expect(deliveries).toHaveLength(1));
      expect(deliveries[0]).toEqual({
        id,
        topic: topics.orchestratorEvents,
        body,
        properties: { MessageType: "batch-init" },
        deliveryCount: 1,
      });
    });

    it("reaches a subscription from an instance that never subscribed (another process)", async () => {
      const consumer = await open();
      const publisher = await open();
      const name = unique("orchestrator");
      const { deliveries, handler } = recorder();
      await consumer.subscribe({ topic: topics.workerResults, name }, handler);

      const id = randomUUID();
      await publisher.publish({
        id,
        topic: topics.workerResults,
        properties: {},
        body: { JobId: "step-1-attempt-1" },
      });

      await waitUntil(() => expect(deliveries.map((delivery) => delivery.id)).toEqual([id]));
    });

    it("routes by the WorkerId filter only to the matching subscription", async () => {
      const bus = await open();
      const [workerA, workerB] = [unique("wa"), unique("wb")];
      const a = recorder();
      const b = recorder();
      await bus.subscribe(
        { topic: topics.workerJobs, name: `worker-${workerA}`, filter: { WorkerId: workerA } },
        a.handler,
      );
      await bus.subscribe(
        { topic: topics.workerJobs, name: `worker-${workerB}`, filter: { WorkerId: workerB } },
        b.handler,
      );

      // As in 000's WorkerJob, the routed property is also a body field: Dapr routes on the
      // CloudEvent (its data), not on broker application properties.
      const [forA, forB] = [randomUUID(), randomUUID()];
      await bus.publish({
        id: forA,
        topic: topics.workerJobs,
        properties: { WorkerId: workerA },
        body: { n: 1, WorkerId: workerA },
      });
      await bus.publish({
        id: forB,
        topic: topics.workerJobs,
        properties: { WorkerId: workerB },
        body: { n: 2, WorkerId: workerB },
      });

      await waitUntil(() => expect(a.deliveries.length + b.deliveries.length).toBe(2));
      await settle();
      expect(a.deliveries.map((delivery) => delivery.id)).toEqual([forA]);
      expect(b.deliveries.map((delivery) => delivery.id)).toEqual([forB]);
    });

    it("gives every subscription of the topic its own copy", async () => {
      const bus = await open();
      const first = recorder();
      const second = recorder();
      await bus.subscribe({ topic: topics.workerResults, name: unique("first") }, first.handler);
      await bus.subscribe({ topic: topics.workerResults, name: unique("second") }, second.handler);

      const id = randomUUID();
      await bus.publish({ id, topic: topics.workerResults, properties: {}, body: { JobId: "j" } });

      await waitUntil(() => {
        expect(first.deliveries.map((delivery) => delivery.id)).toEqual([id]);
        expect(second.deliveries.map((delivery) => delivery.id)).toEqual([id]);
      });
    });

    it("drops a second publish of the same id on the same topic within the dedupe window", async () => {
      const bus = await open();
      const publisher = await open();
      const events = recorder();
      const results = recorder();
      await bus.subscribe({ topic: topics.orchestratorEvents, name: unique("events") }, events.handler);
      await bus.subscribe({ topic: topics.workerResults, name: unique("results") }, results.handler);

      const id = randomUUID();
      await bus.publish({ id, topic: topics.orchestratorEvents, properties: {}, body: { copy: 1 } });
      // Another process re-publishing (an outbox relay after a crash) is a duplicate too.
      await publisher.publish({ id, topic: topics.orchestratorEvents, properties: {}, body: { copy: 2 } });
      // The same id on another topic is another message.
      await bus.publish({ id, topic: topics.workerResults, properties: {}, body: { copy: 3 } });

      await waitUntil(() => expect(events.deliveries.length + results.deliveries.length).toBe(2));
      await settle();
      expect(events.deliveries.map((delivery) => delivery.body)).toEqual([{ copy: 1 }]);
      expect(results.deliveries.map((delivery) => delivery.body)).toEqual([{ copy: 3 }]);
    });

    it("holds a message with deliverAt until that time", async () => {
      const bus = await open();
      const { deliveries, handler } = recorder();
      const receivedAt: number[] = [];
      await bus.subscribe({ topic: topics.orchestratorEvents, name: unique("delayed") }, async (delivery) => {
        receivedAt.push(Date.now());
        await handler(delivery);
      });

      const deliverAt = new Date(Date.now() + 1500);
      const properties = { MessageType: "retry-check" };
      await bus.publish({
        id: randomUUID(),
        topic: topics.orchestratorEvents,
        properties,
        body: {},
        deliverAt,
      });

      await settle(700);
      expect(deliveries).toHaveLength(0);
      await waitUntil(() => expect(deliveries).toHaveLength(1));
      // A little slack for the clocks of the test process and the broker.
      expect(receivedAt[0]).toBeGreaterThanOrEqual(deliverAt.getTime() - 250);
    });

    it(`redelivers a failing message, then dead-letters it after ${MAX_DELIVERY_ATTEMPTS} deliveries with its sanitized error`, async () => {
      const bus = await open();
      const name = unique("failing");
      const counts: number[] = [];
      await bus.subscribe({ topic: topics.orchestratorEvents, name }, async (delivery) => {
        counts.push(delivery.deliveryCount);
        throw new Error("contract.always_fails for jdoe@contoso.com");
      });

      const id = randomUUID();
      const properties = { MessageType: "phase-due" };
      await bus.publish({ id, topic: topics.orchestratorEvents, properties, body: { BatchId: 7 } });

      await waitUntil(
        async () => expect(await bus.deadLetters({ topic: topics.orchestratorEvents, name })).toHaveLength(1),
        20_000,
      );
      await settle();
      expect(counts).toEqual(Array.from({ length: MAX_DELIVERY_ATTEMPTS }, (_, index) => index + 1));
      const [deadLetter] = await bus.deadLetters({ topic: topics.orchestratorEvents, name });
      expect(deadLetter).toMatchObject({
        id,
        topic: topics.orchestratorEvents,
        subscription: name,
        body: { BatchId: 7 },
        properties,
        deliveryCount: MAX_DELIVERY_ATTEMPTS,
      });
      expect(deadLetter?.error).toContain("contract.always_fails");
      expect(deadLetter?.error).not.toContain("jdoe@contoso.com");
      expect(deadLetter?.deadLetteredAt).toBeInstanceOf(Date);
    });

    it("dead-letters a message at once when its handler throws a non-retriable error, and keeps serving", async () => {
      const bus = await open();
      const name = unique("poison");
      const counts: number[] = [];
      const handled: string[] = [];
      await bus.subscribe({ topic: topics.orchestratorEvents, name }, async (delivery) => {
        counts.push(delivery.deliveryCount);
        if ((delivery.body as { ok?: boolean }).ok !== true) {
          throw new NonRetriableError(
            reasonCodes.messageInvalid,
            "Invalid phase-due body: BatchId invalid_type",
          );
        }
        handled.push(delivery.id);
      });

      const poison = randomUUID();
      await bus.publish({
        id: poison,
        topic: topics.orchestratorEvents,
        properties: {},
        body: { BatchId: "x" },
      });
      const next = randomUUID();
      await bus.publish({ id: next, topic: topics.orchestratorEvents, properties: {}, body: { ok: true } });

      await waitUntil(async () => {
        expect(await bus.deadLetters({ topic: topics.orchestratorEvents, name })).toHaveLength(1);
        expect(handled).toEqual([next]);
      });
      await settle();
      expect(counts.filter((count) => count > 1)).toEqual([]);
      const [deadLetter] = await bus.deadLetters({ topic: topics.orchestratorEvents, name });
      expect(deadLetter).toMatchObject({ id: poison, deliveryCount: 1, body: { BatchId: "x" } });
      expect(deadLetter?.error).toBe("message.invalid: Invalid phase-due body: BatchId invalid_type");
    });

    it("redelivers a message whose handler failed once, and does not dead-letter it", async () => {
      const bus = await open();
      const name = unique("flaky");
      const counts: number[] = [];
      await bus.subscribe({ topic: topics.orchestratorEvents, name }, async (delivery) => {
        counts.push(delivery.deliveryCount);
        if (delivery.deliveryCount === 1) throw new Error("transient");
      });

      await bus.publish({ id: randomUUID(), topic: topics.orchestratorEvents, properties: {}, body: {} });

      await waitUntil(() => expect(counts).toEqual([1, 2]));
      await settle();
      expect(counts).toEqual([1, 2]);
      expect(await bus.deadLetters({ topic: topics.orchestratorEvents, name })).toEqual([]);
    });

    describe("publishMany", () => {
      it("delivers messages of several topics, each to its subscriptions, with ids, bodies and properties", async () => {
        const bus = await open();
        const events = recorder();
        const results = recorder();
        await bus.subscribe({ topic: topics.orchestratorEvents, name: unique("events") }, events.handler);
        await bus.subscribe({ topic: topics.workerResults, name: unique("results") }, results.handler);

        const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
        await bus.publishMany([
          {
            id: first,
            topic: topics.orchestratorEvents,
            properties: { MessageType: "phase-due" },
            body: { n: 1 },
          },
          { id: second, topic: topics.workerResults, properties: {}, body: { n: 2 } },
          {
            id: third,
            topic: topics.orchestratorEvents,
            properties: { MessageType: "batch-init" },
            body: { n: 3 },
          },
        ]);

        await waitUntil(() => expect(events.deliveries.length + results.deliveries.length).toBe(3));
        await settle();
        const byId = (deliveries: Delivery[]) => [...deliveries].sort((a, b) => a.id.localeCompare(b.id));
        expect(byId(events.deliveries)).toEqual(
          byId([
            {
              id: first,
              topic: topics.orchestratorEvents,
              body: { n: 1 },
              properties: { MessageType: "phase-due" },
              deliveryCount: 1,
            },
            {
              id: third,
              topic: topics.orchestratorEvents,
              body: { n: 3 },
              properties: { MessageType: "batch-init" },
              deliveryCount: 1,
            },
          ]),
        );
        expect(results.deliveries.map((delivery) => [delivery.id, delivery.body])).toEqual([
          [second, { n: 2 }],
        ]);
      });

      it("holds the delayed messages of a call until their time and delivers the others at once", async () => {
        const bus = await open();
        const received: Array<{ id: string; at: number }> = [];
        await bus.subscribe({ topic: topics.orchestratorEvents, name: unique("mixed") }, async (delivery) => {
          received.push({ id: delivery.id, at: Date.now() });
        });

        const [now, later] = [randomUUID(), randomUUID()];
        const deliverAt = new Date(Date.now() + 1500);
        await bus.publishMany([
          {
            id: later,
            topic: topics.orchestratorEvents,
            properties: { MessageType: "retry-check" },
            body: {},
            deliverAt,
          },
          { id: now, topic: topics.orchestratorEvents, properties: { MessageType: "phase-due" }, body: {} },
        ]);

        await waitUntil(() => expect(received.map((entry) => entry.id)).toEqual([now]));
        await settle(400);
        expect(received.map((entry) => entry.id)).toEqual([now]);
        await waitUntil(() => expect(received.map((entry) => entry.id)).toEqual([now, later]));
        expect(received[1]!.at).toBeGreaterThanOrEqual(deliverAt.getTime() - 250);
      });

      it("sends one copy of an id given twice in one call, and none of an id published before", async () => {
        const bus = await open();
        const publisher = await open();
        const { deliveries, handler } = recorder();
        await bus.subscribe({ topic: topics.orchestratorEvents, name: unique("dupes") }, handler);

        const [earlier, twice, fresh] = [randomUUID(), randomUUID(), randomUUID()];
        await bus.publish({
          id: earlier,
          topic: topics.orchestratorEvents,
          properties: {},
          body: { copy: "earlier-1" },
        });
        await waitUntil(() => expect(deliveries).toHaveLength(1));
        // Another process re-publishing a batch (an outbox relay after a crash) is deduplicated too.
        await publisher.publishMany([
          { id: twice, topic: topics.orchestratorEvents, properties: {}, body: { copy: "twice-1" } },
          { id: earlier, topic: topics.orchestratorEvents, properties: {}, body: { copy: "earlier-2" } },
          { id: twice, topic: topics.orchestratorEvents, properties: {}, body: { copy: "twice-2" } },
          { id: fresh, topic: topics.orchestratorEvents, properties: {}, body: { copy: "fresh" } },
        ]);

        await waitUntil(() => expect(deliveries).toHaveLength(3));
        await settle();
        expect(
          deliveries
            .map((delivery) => delivery.body)
            .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
        ).toEqual([{ copy: "earlier-1" }, { copy: "fresh" }, { copy: "twice-1" }]);
      });

      it("drops a message no subscription matches without failing the others of the call", async () => {
        const bus = await open();
        const worker = unique("wk");
        const { deliveries, handler } = recorder();
        await bus.subscribe(
          { topic: topics.workerJobs, name: `worker-${worker}`, filter: { WorkerId: worker } },
          handler,
        );

        const [nobodys, mine] = [randomUUID(), randomUUID()];
        const stranger = unique("nobody");
        await bus.publishMany([
          {
            id: nobodys,
            topic: topics.workerJobs,
            properties: { WorkerId: stranger },
            body: { WorkerId: stranger },
          },
          {
            id: mine,
            topic: topics.workerJobs,
            properties: { WorkerId: worker },
            body: { WorkerId: worker },
          },
        ]);

        await waitUntil(() => expect(deliveries.map((delivery) => delivery.id)).toEqual([mine]));
        await settle();
        expect(deliveries.map((delivery) => delivery.id)).toEqual([mine]);
      });

      it("does nothing for an empty array", async () => {
        const bus = await open();
        await expect(bus.publishMany([])).resolves.toBeUndefined();
      });
    });

    it("shares a subscription between consumers in two instances without double handling", async () => {
      const [first, second] = [await open(), await open()];
      const name = unique("competing");
      const handledBy: Array<{ consumer: string; id: string }> = [];
      const consume = (consumer: string) => async (delivery: Delivery) => {
        handledBy.push({ consumer, id: delivery.id });
        await settle(40);
      };
      await first.subscribe({ topic: topics.orchestratorEvents, name }, consume("first"));
      await second.subscribe({ topic: topics.orchestratorEvents, name }, consume("second"));

      const ids = Array.from({ length: 20 }, () => randomUUID());
      for (const id of ids)
        await first.publish({ id, topic: topics.orchestratorEvents, properties: {}, body: {} });

      await waitUntil(() => expect(handledBy).toHaveLength(ids.length));
      await settle();
      expect(handledBy.map((entry) => entry.id).sort()).toEqual([...ids].sort());
      expect(handledBy.some((entry) => entry.consumer === "first")).toBe(true);
      expect(handledBy.some((entry) => entry.consumer === "second")).toBe(true);
    });

    it("delivers nothing after stop(), and keeps the message for the subscription's next consumer", async () => {
      const consumer = await open();
      const publisher = await open();
      const name = unique("stopping");
      const before = recorder();
      await consumer.subscribe({ topic: topics.orchestratorEvents, name }, before.handler);
      await publisher.publish({
        id: randomUUID(),
        topic: topics.orchestratorEvents,
        properties: {},
        body: { n: 1 },
      });
      await waitUntil(() => expect(before.deliveries).toHaveLength(1));

      await consumer.stop();
      const kept = randomUUID();
      await publisher.publish({ id: kept, topic: topics.orchestratorEvents, properties: {}, body: { n: 2 } });
      await settle(1000);
      expect(before.deliveries).toHaveLength(1);

      const after = recorder();
      const next = await open();
      await next.subscribe({ topic: topics.orchestratorEvents, name }, after.handler);
      await waitUntil(() => expect(after.deliveries.map((delivery) => delivery.id)).toEqual([kept]));
    });
  });
}
