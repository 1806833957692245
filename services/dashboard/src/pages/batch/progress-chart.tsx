import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { BatchProgress } from "./batch-api.ts";

const HEIGHT = 220;
const stepped = uPlot.paths.stepped?.({ align: 1 });
const MINUTE = 60;
const HOUR = 60 * MINUTE;
/** The x axis's tick spacings in seconds (uPlot picks the first that leaves room for labels). */
const timeIncrements = [
  1,
  2,
  5,
  10,
  15,
  30,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  24 * HOUR,
  2 * 24 * HOUR,
  7 * 24 * HOUR,
];

/** uPlot wants columns: times in seconds, then one array per series. */
export function chartData(progress: BatchProgress): uPlot.AlignedData {
  return [
    progress.points.map((point) => Date.parse(point.at) / 1000),
    progress.points.map((point) => point.succeeded),
    progress.points.map((point) => point.failed),
  ];
}

/**
 * Members finished over time (GET /api/batches/{id}/progress): succeeded and failed, cumulative.
 * uPlot draws on a canvas, so the same numbers are also in the text summary for screen readers
 * (and the series differ by dash, not only by colour).
 */
export function ProgressChart(props: { readonly progress: BatchProgress | undefined }) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);

  useEffect(() => {
    const element = host.current;
    if (element === null) return;
    const chart = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: HEIGHT,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        // Points are per second: ticks of whole seconds and up, never ":04.500" on a short batch.
        axes: [{ incrs: timeIncrements }, { label: "members" }],
        series: [
          {},
          // Stepped: a count holds until the next member finishes; a slope would invent members.
          { label: "succeeded", stroke: "#1a5e2d", width: 2, paths: stepped },
          { label: "failed", stroke: "#b3261e", width: 2, dash: [6, 4], paths: stepped },
        ],
      },
      [[], [], []],
      element,
    );
    plot.current = chart;
    const resize = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(280, element.clientWidth), height: HEIGHT }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
      plot.current = undefined;
    };
  }, []);

  useEffect(() => {
    if (props.progress !== undefined) plot.current?.setData(chartData(props.progress));
  }, [props.progress]);

  const last = props.progress?.points.at(-1);
  return (
    <section class="batch-section" aria-labelledby="progress-title">
      <h2 id="progress-title">Progress</h2>
      <p data-testid="progress-summary">
        {props.progress === undefined
          ? "Loading…"
          : `${last?.succeeded ?? 0} of ${props.progress.memberTotal} members through, ${last?.failed ?? 0} failed.`}
      </p>
      <div ref={host} class="progress-chart" role="img" aria-label="Members finished over time" />
    </section>
  );
}
