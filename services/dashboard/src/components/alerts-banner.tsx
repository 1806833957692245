import { useState } from "preact/hooks";
import { usePolling } from "../pages/batch/use-polling.ts";
import { getOpenAlerts, type OpenAlert } from "./alerts-api.ts";
import { alertLines, alertsHeading } from "./alerts-wording.ts";

/** Open alerts change on the evaluator's schedule (every minute by default): no need to ask more often. */
const ALERTS_POLL_MS = 30_000;

/**
 * Issue 31: the open alerts the system raised, above every page while any is open. Nothing is
 * shown when none is open, or when the API refuses (a token without a role): an alert banner
 * that itself fails would only add noise.
 */
export function AlertsBanner() {
  const [alerts, setAlerts] = useState<readonly OpenAlert[]>([]);
  usePolling(
    async () => {
      try {
        setAlerts(await getOpenAlerts());
      } catch {
        setAlerts([]);
      }
    },
    true,
    ALERTS_POLL_MS,
  );
  if (alerts.length === 0) return null;
  const critical = alerts.some((alert) => alert.severity === "critical");
  return (
    <section
      class={`alerts-banner ${critical ? "alerts-critical" : "alerts-warning"}`}
      role="status"
      aria-labelledby="alerts-title"
      data-testid="alerts-banner"
    >
      <h2 id="alerts-title">{alertsHeading(alerts)}</h2>
      <ul>
        {alertLines(alerts).map((line) => (
          <li key={line.id} data-alert={line.id}>
            <span class={`badge ${line.severity === "critical" ? "badge-danger" : "badge-warning"}`}>
              {line.severity}
            </span>{" "}
            {line.href === undefined ? line.text : <a href={line.href}>{line.text}</a>}
          </li>
        ))}
      </ul>
    </section>
  );
}
