import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";

export interface ConfirmDialogProps {
  readonly open: boolean;
  readonly title: string;
  readonly children?: ComponentChildren;
  /** Text of the confirming button, e.g. "Cancel batch". */
  readonly confirmLabel: string;
  /** Red confirming button for actions that cannot be undone. */
  readonly danger?: boolean;
  /** May be async: the dialog shows "Working…" and any error message until it settles. */
  readonly onConfirm: () => unknown;
  readonly onCancel: () => void;
}

/**
 * A modal confirmation built on <dialog>: the browser traps focus, Escape cancels and focus
 * returns to the opener, so it is keyboard-usable without extra code.
 */
export function ConfirmDialog(props: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  // A page may hold several dialogs (the batch header's, a phase's approval): ids of their own.
  const titleId = useId();

  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (props.open && !dialog.open) {
      setError(undefined);
      dialog.showModal();
    } else if (!props.open && dialog.open) dialog.close();
  }, [props.open]);

  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await props.onConfirm();
    } catch (caught) {
      setError(caught instanceof Error ? caught.message : String(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog
      ref={ref}
      class="confirm-dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) props.onCancel();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      <div class="confirm-dialog-body">{props.children}</div>
      {error !== undefined && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      <div class="dialog-actions">
        <button type="button" onClick={props.onCancel} disabled={busy}>
          Back
        </button>
        <button
          type="button"
          class={props.danger === true ? "danger" : "primary"}
          onClick={() => void confirm()}
          disabled={busy}
        >
          {busy ? "Working…" : props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
