/**
 * A status word in a coloured pill. Colour is never the only signal (the word is always there),
 * and each tone's text/background pair meets WCAG AA contrast (app.css `.badge-*`).
 */
export type BadgeTone = "neutral" | "info" | "success" | "warning" | "danger";

const tones: Readonly<Record<string, BadgeTone>> = {
  // batch statuses
  detected: "neutral",
  init_dispatched: "info",
  created: "neutral",
  scheduled: "neutral",
  running: "info",
  active: "info",
  paused: "warning",
  completed: "success",
  cancelled: "neutral",
  canceled: "neutral",
  failed: "danger",
  // member / step statuses
  pending: "neutral",
  dispatched: "info",
  superseded: "neutral",
  poll_timeout: "danger",
  partially_succeeded: "warning",
  queued: "neutral",
  waiting: "info",
  polling: "info",
  in_progress: "info",
  succeeded: "success",
  done: "success",
  skipped: "neutral",
  removed: "neutral",
  blocked: "warning",
  retrying: "warning",
  error: "danger",
  // phases
  awaiting_approval: "warning",
  due: "info",
  open: "info",
  closed: "neutral",
};

export function toneOf(status: string): BadgeTone {
  return tones[status.toLowerCase()] ?? "neutral";
}

export function StatusBadge(props: {
  readonly status: string;
  readonly tone?: BadgeTone;
  readonly title?: string;
}) {
  const tone = props.tone ?? toneOf(props.status);
  return (
    <span class={`badge badge-${tone}`} title={props.title}>
      {props.status.replace(/_/g, " ")}
    </span>
  );
}
