/** Read-only text with line numbers (a runbook's YAML); long lines scroll, never wrap. */
export function CodeView(props: { readonly text: string; readonly label: string }) {
  const lines = props.text.replace(/\n$/, "").split("\n");
  return (
    <div class="code-view" role="region" aria-label={props.label} tabIndex={0}>
      <pre>
        {lines.map((line, index) => (
          <div class="code-line" key={index}>
            <span class="line-no" aria-hidden="true">
              {index + 1}
            </span>
            <code>{line === "" ? " " : line}</code>
          </div>
        ))}
      </pre>
    </div>
  );
}
