import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createStandInBroker,
  startStandInSidecar,
  type StandInBroker,
  type StandInSidecar,
} from "./index.ts";
import { startTestApp, type AppHandler, type TestApp } from "./test-app.ts";

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function newBroker(options: Parameters<typeof createStandInBroker>[0] = {}): StandInBroker {
  const broker = createStandInBroker(options);
  cleanups.push(() => broker.close());
  return broker;
}

async function newApp(handler?: AppHandler): Promise<TestApp> {
  const app = await startTestApp(handler ? { handler } : {});
  cleanups.push(() => app.stop());
  return app;
}

async function newSidecar(
  broker: StandInBroker,
  appId: string,
  app: TestApp,
  apiVersion = "v1.0-alpha1",
): Promise<StandInSidecar & { jobUrl(name: string): string }> {
  const sidecar = await startStandInSidecar({ broker, appId, appUrl: app.url, log: () => undefined });
  cleanups.push(() => sidecar.stop());
  await sidecar.ready();
  return Object.assign(sidecar, { jobUrl: (name: string) => `${sidecar.url}/${apiVersion}/jobs/${name}` });
}

function scheduleJob(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("jobs API", () => {
  it("triggers a one-shot job at its RFC 3339 dueTime with POST /job/<name> carrying the data, then forgets the job", async () => {
    const broker = newBroker();
    const app = await newApp();
    const scheduler = await newSidecar(broker, "matoolkit-scheduler", app);
    const name = "deliver-0123456789abcdef0123456789abcdef01234567";
    const dueAt = new Date(Date.now() + 300);

    const response = await scheduleJob(scheduler.jobUrl(name), {
      dueTime: dueAt.toISOString(),
      data: { messageId: "m-1" },
    });
    expect(response.status).toBe(204);
    expect(scheduler.jobs()).toEqual([expect.objectContaining({ name, triggerCount: 0 })]);

    const [trigger] = await app.waitForRequests(`/job/${name}`, 1);
    expect(Date.now()).toBeGreaterThanOrEqual(dueAt.getTime() - 5);
    expect(trigger?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(trigger?.body ?? "null")).toEqual({ messageId: "m-1" });
    await sleep(20);
    expect(scheduler.jobs()).toEqual([]);
    const afterwards = await fetch(scheduler.jobUrl(name));
    expect(afterwards.status).toBe(500);
    expect(await afterwards.json()).toMatchObject({ errorCode: "DAPR_SCHEDULER_GET_JOB" });
  });

  it("fires an @every job repeatedly, honours repeats, and serves the job on GET under /v1.0/jobs too", async () => {
    const broker = newBroker();
    const app = await newApp();
    const scheduler = await newSidecar(broker, "matoolkit-scheduler", app, "v1.0");

    expect(
      (
        await scheduleJob(scheduler.jobUrl("scheduler-tick"), {
          schedule: "@every 100ms",
          repeats: 3,
          data: "tick",
        })
      ).status,
    ).toBe(204);
    const job = await (await fetch(scheduler.jobUrl("scheduler-tick"))).json();
    expect(job).toEqual({
      name: "scheduler-tick",
      schedule: "@every 100ms",
      repeats: 3,
      data: { "@type": "type.googleapis.com/google.protobuf.Value", value: "tick" },
    });

    const triggers = await app.waitForRequests("/job/scheduler-tick", 3, 3000);
    expect(triggers.map((trigger) => trigger.body)).toEqual(['"tick"', '"tick"', '"tick"']);
    await sleep(250);
    expect(app.requests.filter((request) => request.path === "/job/scheduler-tick")).toHaveLength(3);
    expect(scheduler.jobs()).toEqual([]);
  });

  it("refuses to replace an existing job without overwrite (409) and replaces it with overwrite: true", async () => {
    const broker = newBroker();
    const app = await newApp();
    const scheduler = await newSidecar(broker, "matoolkit-scheduler", app);
    const url = scheduler.jobUrl("poll-sweep");

    expect((await scheduleJob(url, { schedule: "@every 30s" })).status).toBe(204);
    const conflict = await scheduleJob(url, { schedule: "@every 1m" });
    expect(conflict.status).toBe(409);
    expect(((await (await fetch(url)).json()) as { schedule: string }).schedule).toBe("@every 30s");

    expect((await scheduleJob(url, { schedule: "@every 1m", overwrite: true })).status).toBe(204);
    expect(((await (await fetch(url)).json()) as { schedule: string }).schedule).toBe("@every 1m");

    expect((await fetch(url, { method: "DELETE" })).status).toBe(204);
    expect((await fetch(url, { method: "DELETE" })).status).toBe(204);
    expect(scheduler.jobs()).toEqual([]);
  });

  it("answers 400 for a job without schedule or dueTime and for a schedule it cannot evaluate, naming it", async () => {
    const broker = newBroker();
    const app = await newApp();
    const scheduler = await newSidecar(broker, "matoolkit-scheduler", app);

    const empty = await scheduleJob(scheduler.jobUrl("nothing"), {});
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ errorCode: "DAPR_SCHEDULER_SCHEDULE_EMPTY" });

    const bad = await scheduleJob(scheduler.jobUrl("bad"), { schedule: "@fortnightly" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toContain("@fortnightly");

    expect((await scheduleJob(scheduler.jobUrl("cron"), { schedule: "0 30 * * * *" })).status).toBe(204);
  });

  it("retries a failing trigger per the failure policy and does not retry a 404", async () => {
    const broker = newBroker();
    let calls = 0;
    const app = await newApp((request) => {
      if (request.path === "/job/gone") return { status: 404 };
      calls += 1;
      return { status: calls < 3 ? 500 : 200 };
    });
    const scheduler = await newSidecar(broker, "matoolkit-scheduler", app);

    await scheduleJob(scheduler.jobUrl("flaky"), {
      dueTime: "0s",
      data: { n: 1 },
      failure_policy: { constant: { max_retries: 5, interval: "0.02s" } },
    });
    await scheduleJob(scheduler.jobUrl("gone"), { dueTime: "0s", data: { n: 2 } });

    await app.waitForRequests("/job/flaky", 3);
    await app.waitForRequests("/job/gone", 1);
    await sleep(100);
    expect(
      scheduler
        .jobTriggers()
        .filter((record) => record.name === "flaky")
        .map((record) => [record.attempt, record.outcome]),
    ).toEqual([
      [1, "failure"],
      [2, "failure"],
      [3, "success"],
    ]);
    expect(app.requests.filter((request) => request.path === "/job/gone")).toHaveLength(1);
  });

  it("applies Dapr's default failure policy to a job that sets none: 1 trigger + 3 retries 1 s apart, then dropped", async () => {
    const broker = newBroker();
    const app = await newApp(() => ({ status: 500 }));
    const scheduler = await newSidecar(broker, "matoolkit-scheduler", app);

    await scheduleJob(scheduler.jobUrl("always-failing"), { dueTime: "0s", data: "x" });

    // The job disappears once its policy gives up on the trigger.
    await vi.waitFor(() => expect(scheduler.jobs()).toEqual([]), { timeout: 10_000, interval: 25 });
    const attempts = scheduler.jobTriggers().filter((record) => record.name === "always-failing");
    expect(attempts.map((record) => [record.attempt, record.outcome])).toEqual([
      [1, "failure"],
      [2, "failure"],
      [3, "failure"],
      [4, "failure"],
    ]);
    const gaps = attempts
      .slice(1)
      .map((record, index) => record.at.getTime() - attempts[index]!.at.getTime());
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(950);
  });

  it("delivers each trigger to exactly one sidecar of the app id and keeps jobs of different app ids apart", async () => {
    const broker = newBroker();
    const appA = await newApp();
    const appB = await newApp();
    const other = await newApp();
    const sidecarA = await newSidecar(broker, "matoolkit-orchestrator", appA);
    await newSidecar(broker, "matoolkit-orchestrator", appB);
    const otherSidecar = await newSidecar(broker, "matoolkit-worker", other);

    await scheduleJob(sidecarA.jobUrl("tick"), { schedule: "@every 50ms", repeats: 6, data: "tick" });
    const deadline = Date.now() + 3000;
    const count = () =>
      [appA, appB].flatMap((app) => app.requests).filter((request) => request.path === "/job/tick").length;
    while (count() < 6 && Date.now() < deadline) await sleep(10);
    await sleep(150);

    expect(count()).toBe(6);
    expect(appA.requests.some((request) => request.path === "/job/tick")).toBe(true);
    expect(appB.requests.some((request) => request.path === "/job/tick")).toBe(true);
    expect(other.requests.some((request) => request.path === "/job/tick")).toBe(false);
    expect((await fetch(otherSidecar.jobUrl("tick"))).status).toBe(500);
  });
  it('takes a failure policy interval only as a protobuf Duration: 400 ERR_MALFORMED_REQUEST for "5000ms", "0.2s" accepted', async () => {
    const broker = newBroker();
    const app = await newApp();
    const scheduler = await newSidecar(broker, "matoolkit-scheduler", app);

    const goDuration = await scheduleJob(scheduler.jobUrl("go-duration"), {
      dueTime: "1h",
      data: "x",
      failurePolicy: { constant: { maxRetries: 3, interval: "5000ms" } },
    });
    expect(goDuration.status).toBe(400);
    expect(await goDuration.json()).toMatchObject({ errorCode: "ERR_MALFORMED_REQUEST" });
    expect(scheduler.jobs()).toEqual([]);

    const duration = await scheduleJob(scheduler.jobUrl("duration"), {
      dueTime: "1h",
      data: "x",
      failurePolicy: { constant: { maxRetries: 3, interval: "0.2s" } },
    });
    expect(duration.status).toBe(204);
    expect(await (await fetch(scheduler.jobUrl("duration"))).json()).toMatchObject({
      failurePolicy: { constant: { interval: "0.2s", maxRetries: 3 } },
    });
  });

  it("never calls the app for a job scheduled without data: every trigger fails per the failure policy, as on daprd 1.16.0–1.18.2", async () => {
    const broker = newBroker();
    const app = await newApp();
    const scheduler = await newSidecar(broker, "matoolkit-scheduler", app);

    await scheduleJob(scheduler.jobUrl("no-data"), {
      dueTime: "0s",
      failurePolicy: { constant: { maxRetries: 2, interval: "0.02s" } },
    });
    // `data: null` is a google.protobuf.Value (null_value): that one is delivered.
    await scheduleJob(scheduler.jobUrl("null-data"), { dueTime: "0s", data: null });

    await vi.waitFor(() => expect(scheduler.jobs()).toEqual([]), { timeout: 15_000, interval: 20 });
    const attempts = scheduler.jobTriggers().filter((record) => record.name === "no-data");
    expect(attempts.map((record) => [record.attempt, record.outcome, record.httpStatus])).toEqual([
      [1, "failure", undefined],
      [2, "failure", undefined],
      [3, "failure", undefined],
    ]);
    expect(attempts[0]?.error).toContain("job has no data");
    expect(app.requests.filter((request) => request.path === "/job/no-data")).toEqual([]);
    const [delivered] = await app.waitForRequests("/job/null-data", 1);
    expect(delivered?.body).toBe("null");
  });
});
