import { useEffect, useRef, useState } from "preact/hooks";

export interface LineMark {
  readonly line: number;
  readonly message: string;
}

export interface CodeEditorHandle {
  /** Puts the caret at the start of `line` (1-based), scrolls it into view and focuses. */
  goToLine(line: number, column?: number): void;
}

/**
 * A plain textarea with a line-number gutter and marked lines behind the text (a runbook's
 * problems). The textarea stays a textarea (native editing, undo, screen readers); the gutter and
 * the marks scroll with it. Lines never wrap, so text line N is always gutter row N.
 */
export function CodeEditor(props: {
  readonly id: string;
  readonly value: string;
  readonly onInput: (value: string) => void;
  readonly marks: readonly LineMark[];
  readonly describedBy?: string;
  readonly handle?: (handle: CodeEditorHandle) => void;
}) {
  const textarea = useRef<HTMLTextAreaElement>(null);
  const [scroll, setScroll] = useState({ top: 0, left: 0 });
  const lineCount = Math.max(1, props.value.split("\n").length);
  const marked = new Map<number, string[]>();
  for (const mark of props.marks) marked.set(mark.line, [...(marked.get(mark.line) ?? []), mark.message]);

  useEffect(() => {
    props.handle?.({
      goToLine(line, column = 1) {
        const element = textarea.current;
        if (element === null) return;
        const lines = element.value.split("\n");
        const offset = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0) + column - 1;
        element.focus();
        element.setSelectionRange(offset, offset);
        const lineHeight = parseFloat(getComputedStyle(element).lineHeight) || 20;
        element.scrollTop = Math.max(0, (line - 3) * lineHeight);
      },
    });
  }, [props.handle]);

  return (
    <div class="code-editor">
      <div class="gutter" aria-hidden="true">
        <div style={{ transform: `translateY(${-scroll.top}px)` }}>
          {Array.from({ length: lineCount }, (_, index) => {
            const messages = marked.get(index + 1);
            return (
              <div
                key={index}
                class={messages === undefined ? "gutter-line" : "gutter-line marked"}
                title={messages?.join("\n")}
                data-line={index + 1}
              >
                {index + 1}
              </div>
            );
          })}
        </div>
      </div>
      <div class="editor-area">
        <div class="marks" aria-hidden="true">
          <div style={{ transform: `translateY(${-scroll.top}px)` }}>
            {Array.from({ length: lineCount }, (_, index) => (
              <div key={index} class={marked.has(index + 1) ? "mark-line marked" : "mark-line"} />
            ))}
          </div>
        </div>
        <textarea
          ref={textarea}
          id={props.id}
          class="code"
          wrap="off"
          spellcheck={false}
          autocomplete="off"
          value={props.value}
          aria-describedby={props.describedBy}
          aria-invalid={props.marks.length > 0 ? "true" : undefined}
          onInput={(event) => props.onInput(event.currentTarget.value)}
          onScroll={(event) =>
            setScroll({ top: event.currentTarget.scrollTop, left: event.currentTarget.scrollLeft })
          }
        />
      </div>
    </div>
  );
}
