import type { StatusEvent } from "./batch-api.ts";
import { eventSubject } from "./event-wording.ts";

/**
 * The batch's status changes, newest first, as the page follows them (see event-feed.ts), each
 * named by its member, phase or step (event-wording.ts; the ids are in the name's title). Not
 * an aria-live region: a busy batch changes many times a second, which would drown a screen
 * reader; the count in the heading says that more came.
 */
export function EventTimeline(props: {
  readonly events: readonly StatusEvent[];
  readonly seen: number;
  readonly live: boolean;
}) {
  const newestFirst = [...props.events].reverse();
  return (
    <section class="batch-section" aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      <p class="muted" data-testid="events-status">
        {props.seen} events{props.live ? ", following live" : ""}
        {props.seen > props.events.length ? ` (the newest ${props.events.length} shown)` : ""}
      </p>
      {/* Focusable: once it scrolls, a keyboard user must be able to scroll it (WCAG 2.1.1). */}
      <ol class="event-list" data-testid="event-list" tabIndex={0} aria-labelledby="events-title">
        {newestFirst.map((event) => {
          const subject = eventSubject(event);
          return (
            <li
              key={event.id}
              data-testid="event"
              data-entity={event.entity}
              data-entity-id={event.entityId}
              data-to={event.toStatus}
            >
              <time dateTime={event.at}>{new Date(event.at).toLocaleTimeString()}</time>
              <span class="event-body">
                <span class="event-entity" title={subject.title}>
                  {subject.text}
                </span>
                <span class="event-change">
                  {event.fromStatus ?? "created"} → <strong>{event.toStatus}</strong>
                </span>
                {event.reason !== null && <code class="event-reason">{event.reason}</code>}
                {event.actor !== null && <span class="muted">by {event.actor}</span>}
              </span>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
