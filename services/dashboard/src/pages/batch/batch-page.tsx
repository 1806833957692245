import { useRef, useState } from "preact/hooks";
import { ApiError } from "../../api/client.ts";
import { currentSession } from "../../auth/session.ts";
import {
  describeError,
  getBatch,
  getProgress,
  isFinal,
  type BatchDetail,
  type BatchProgress,
} from "./batch-api.ts";
import { BatchHeader } from "./batch-header.tsx";
import "./batch.css";
import { EventFeed } from "./event-feed.ts";
import { EventTimeline } from "./event-timeline.tsx";
import { MemberGrid } from "./member-grid.tsx";
import { getWorkerPacing, type WorkerPacing } from "./pacing-api.ts";
import { PacingIndicator } from "./pacing-indicator.tsx";
import { PhaseTimeline } from "./phase-timeline.tsx";
import { ProgressChart } from "./progress-chart.tsx";
import { usePolling } from "./use-polling.ts";

/**
 * #/batches/:id — one batch, live: header and actions, phase timeline, progress chart and the
 * worker's pacing, member × step grid and event timeline. While the batch is not final every part is read again
 * every 2 s (one tick: the batch, new events, progress, then the grid pages in view); once it is
 * final the page stops polling, and an action that reopens it (a redrive) starts it again.
 */
export function BatchPage(props: { readonly batchId: number }) {
  const [batch, setBatch] = useState<BatchDetail | undefined>(undefined);
  const [progress, setProgress] = useState<BatchProgress | undefined>(undefined);
  const [pacing, setPacing] = useState<{ previous?: WorkerPacing; current?: WorkerPacing }>({});
  const [error, setError] = useState<{ message: string; notFound: boolean } | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [refreshKey, setRefreshKey] = useState(0);
  const feed = useRef(new EventFeed(props.batchId)).current;
  const [, setEventCount] = useState(0);

  const tick = async () => {
    try {
      const read = await getBatch(props.batchId);
      setBatch(read);
      if (await feed.poll()) setEventCount(feed.seen);
      setProgress(await getProgress(props.batchId));
      // Secondary: a failed read leaves the indicator at its last reading, the page refreshed.
      const workers = await getWorkerPacing().catch(() => undefined);
      if (workers !== undefined) setPacing((before) => ({ previous: before.current, current: workers }));
      setRefreshKey((key) => key + 1);
      setError(undefined);
    } catch (caught) {
      setError({
        message: describeError(caught),
        notFound: caught instanceof ApiError && caught.status === 404,
      });
    }
  };

  const live = batch === undefined || !isFinal(batch.status);
  usePolling(tick, live && error?.notFound !== true);

  if (error?.notFound === true) {
    return (
      <section>
        <h1 tabIndex={-1}>Batch {props.batchId}</h1>
        <p role="alert">
          This batch does not exist. Go back to the <a href="#/batches">batches</a>.
        </p>
      </section>
    );
  }
  if (batch === undefined) {
    return (
      <section>
        <h1 tabIndex={-1}>Batch {props.batchId}</h1>
        {error === undefined ? (
          <p>Loading…</p>
        ) : (
          <p role="alert" class="error-text">
            {error.message}
          </p>
        )}
      </section>
    );
  }
  const onActed = (message: string) => {
    setNotice(message);
    void tick();
  };
  return (
    <div class="batch-page" data-testid="batch-page" data-status={batch.status}>
      <p>
        <a href="#/batches">← Batches</a>
      </p>
      <BatchHeader batch={batch} session={currentSession()} onActed={onActed} />
      <p role="status" class="batch-notice" data-testid="batch-notice">
        {notice ?? ""} {live ? "Updating every 2 seconds." : "The batch has ended; updates stopped."}
      </p>
      {error !== undefined && (
        <p role="alert" class="error-text">
          Could not refresh: {error.message}
        </p>
      )}
      <PhaseTimeline batch={batch} session={currentSession()} onActed={onActed} />
      <MemberGrid batchId={props.batchId} refreshKey={refreshKey} />
      <div class="batch-columns">
        <div>
          <ProgressChart progress={progress} />
          <PacingIndicator previous={pacing.previous} current={pacing.current} />
        </div>
        <EventTimeline events={feed.events} seen={feed.seen} live={live} />
      </div>
    </div>
  );
}
