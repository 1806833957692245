import { useState } from "preact/hooks";
import { apiSend } from "../../api/client.ts";
import { useResource } from "../../api/use-resource.ts";
import { ApiErrorBox } from "../../components/api-error-box.tsx";
import { ConfirmDialog } from "../../components/confirm-dialog.tsx";
import { formatTime } from "../../components/format.ts";
import type { AutomationSettings } from "./runbook-types.ts";

/**
 * The automation switch: on, the scheduler creates batches from the data source by itself. Only
 * Admins may flip it (the API checks again); turning it on is confirmed because batches follow.
 */
export function AutomationPanel(props: { readonly name: string; readonly canChange: boolean }) {
  const path = `/runbooks/${encodeURIComponent(props.name)}/automation`;
  const settings = useResource<AutomationSettings>(path);
  const [confirming, setConfirming] = useState(false);
  const enabled = settings.data?.automationEnabled ?? false;

  const flip = async () => {
    await apiSend("PUT", path, { enabled: !enabled });
    setConfirming(false);
    settings.reload();
  };

  return (
    <div class="card">
      <h2>Automation</h2>
      {settings.error !== undefined && <ApiErrorBox error={settings.error} />}
      {settings.data !== undefined && (
        <>
          <p>
            <span class={`switch-state ${enabled ? "on" : "off"}`} data-testid="automation-state">
              {enabled ? "On" : "Off"}
            </span>{" "}
            {enabled
              ? `since ${formatTime(settings.data.enabledAt)} by ${settings.data.enabledBy ?? "unknown"}: the scheduler creates batches from the data source.`
              : "The scheduler creates no batch for this runbook; manual batches still run."}
          </p>
          {props.canChange && (
            <button type="button" class={enabled ? "" : "primary"} onClick={() => setConfirming(true)}>
              {enabled ? "Turn automation off" : "Turn automation on"}
            </button>
          )}
          <ConfirmDialog
            open={confirming}
            title={enabled ? "Turn automation off?" : "Turn automation on?"}
            confirmLabel={enabled ? "Turn off" : "Turn on"}
            onConfirm={flip}
            onCancel={() => setConfirming(false)}
          >
            <p>
              {enabled
                ? "No new batch will be created automatically. Running batches keep going and their phases keep falling due."
                : "The scheduler will read the data source on its next tick and create batches for the rows it finds. Check the query preview first."}
            </p>
          </ConfirmDialog>
        </>
      )}
    </div>
  );
}
