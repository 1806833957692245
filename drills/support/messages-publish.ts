import type { Topic } from "@matoolkit/domain";
import type { MessageBus, OutgoingMessage } from "@matoolkit/runtime";
import type { MalformedMessage } from "./messages-catalogue.ts";

export interface PublishTally {
  published: number;
  /** The messages the bus accepted (routed to zero, one or more subscriptions). */
  readonly accepted: OutgoingMessage[];
  /** The bus refused the message itself (e.g. PostgreSQL refuses NUL in a JSON string). */
  refused: number;
  /** First line of each refusal's error, counted (the drill's own messages: no member data). */
  readonly refusalReasons: Map<string, number>;
}

/** Publishes every message, `parallel` at a time, and tallies per topic what the bus said. */
export async function publishAll(
  bus: MessageBus,
  messages: readonly MalformedMessage[],
  parallel: number,
): Promise<Map<Topic, PublishTally>> {
  const tallies = new Map<Topic, PublishTally>();
  let next = 0;
  const lane = async () => {
    while (next < messages.length) {
      const { message } = messages[next++]!;
      let tally = tallies.get(message.topic);
      if (tally === undefined) {
        tally = { published: 0, accepted: [], refused: 0, refusalReasons: new Map() };
        tallies.set(message.topic, tally);
      }
      try {
        await bus.publish(message);
        tally.published++;
        tally.accepted.push(message);
      } catch (error) {
        tally.refused++;
        const why = `${message.topic}: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 120)}`;
        tally.refusalReasons.set(why, (tally.refusalReasons.get(why) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return tallies;
}
