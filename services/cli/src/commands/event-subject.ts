import { formatCell } from "../output/table.ts";
import type { EventView } from "./views.ts";

/**
 * What an event is about, in an operator's words: the member's key (as `batch members` shows it),
 * the runbook's phase and step names, which the events read model joins in. `batch events` adds the
 * id in parentheses, since the CLI's other commands take ids; `batch watch` leaves it out. The dashboard's timeline words events the
 * same way (services/dashboard/src/pages/batch/event-wording.ts). An event the read model could
 * not name (an older server, a row gone) is its entity and id, as before.
 */
export function eventSubject(event: EventView, options: { readonly withId: boolean }): string {
  const id = `${event.entity} ${event.entityId}`;
  const named = (text: string) => (options.withId ? `${text} (${id})` : text);
  const member = event.memberKey ?? null;
  const phase = event.phaseName ?? null;
  const step = event.stepName ?? null;
  switch (event.entity) {
    case "step":
      return member === null || step === null ? id : named(`${formatCell(member)} · ${formatCell(step)}`);
    case "member":
      return member === null ? id : named(formatCell(member));
    case "phase":
      return phase === null ? id : named(`phase ${formatCell(phase)}`);
    case "init":
      return step === null ? id : named(`init ${formatCell(step)}`);
    default:
      return id;
  }
}
