import {
  Virtualizer,
  elementScroll,
  observeElementOffset,
  observeElementRect,
  type VirtualizerOptions,
} from "@tanstack/virtual-core";
import { useEffect, useLayoutEffect, useReducer, useState } from "preact/hooks";

/**
 * @tanstack/virtual-core bound to a Preact component (its React adapter is the same dozen lines):
 * the virtualizer watches the scroll element's size and offset and tells us to re-render; we
 * render only `getVirtualItems()` inside a spacer of `getTotalSize()` pixels. Rows have a fixed
 * height, so no measuring is needed.
 */
export function useRowVirtualizer(options: {
  readonly count: number;
  readonly rowHeight: number;
  readonly overscan: number;
  /** Pixels above the first row inside the scroll element (a sticky header). */
  readonly scrollMargin: number;
  readonly getScrollElement: () => HTMLElement | null;
}): Virtualizer<HTMLElement, Element> {
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const resolved: VirtualizerOptions<HTMLElement, Element> = {
    count: options.count,
    getScrollElement: options.getScrollElement,
    estimateSize: () => options.rowHeight,
    overscan: options.overscan,
    scrollMargin: options.scrollMargin,
    scrollToFn: elementScroll,
    observeElementRect,
    observeElementOffset,
    onChange: () => rerender(0),
  };
  const [virtualizer] = useState(() => new Virtualizer(resolved));
  virtualizer.setOptions(resolved);
  useEffect(() => virtualizer._didMount(), [virtualizer]);
  useLayoutEffect(() => virtualizer._willUpdate());
  return virtualizer;
}
