import type { StatusEvent } from "./batch-api.ts";

/** What an event is about, as the timeline shows it: in an operator's words, ids in the title. */
export interface EventSubject {
  /** "adele.vance@contoso.test · set-primary-email", "phase cutover", "init create-batch-group". */
  readonly text: string;
  /** The ids and anything the text leaves out: "step execution 10 · phase cutover". */
  readonly title: string;
}

/**
 * Names an event by the member (its key, exactly as the grid shows it to every role), the
 * runbook's phase and step names that the read model joins in; the row ids, which an operator
 * needs only to call the API, stay in the title. An event the read model could not name (a row
 * gone) falls back to its entity and id.
 */
export function eventSubject(event: StatusEvent): EventSubject {
  const fallback = { text: `${event.entity} ${event.entityId}`, title: `${event.entity} ${event.entityId}` };
  switch (event.entity) {
    case "step":
      return event.memberKey === null || event.stepName === null
        ? fallback
        : {
            text: `${event.memberKey} · ${event.stepName}`,
            title: `step execution ${event.entityId}${event.phaseName === null ? "" : ` · phase ${event.phaseName}`}`,
          };
    case "member":
      return event.memberKey === null
        ? fallback
        : { text: event.memberKey, title: `member ${event.entityId}` };
    case "phase":
      return event.phaseName === null
        ? fallback
        : { text: `phase ${event.phaseName}`, title: `phase execution ${event.entityId}` };
    case "init":
      return event.stepName === null
        ? fallback
        : { text: `init ${event.stepName}`, title: `init execution ${event.entityId}` };
    default:
      return fallback;
  }
}
