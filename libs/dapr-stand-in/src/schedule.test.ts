import { describe, expect, it } from "vitest";
import { nextCronTime, parseCron } from "./cron.ts";
import { parseGoDuration } from "./go-duration.ts";
import { nextScheduledTime, parseSchedule, resolvePointInTime, ScheduleError } from "./schedule.ts";

describe("Go durations", () => {
  it.each([
    ["30s", 30_000],
    ["1m30s", 90_000],
    ["500ms", 500],
    ["1.5h", 5_400_000],
    ["2h45m10.5s", 9_910_500],
    ["-2m", -120_000],
    ["0", 0],
    ["1500us", 1.5],
  ])("%s is %d ms", (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 6);
  });

  it.each(["", "30", "1d", "1m 30s", "s"])("rejects %j", (text) => {
    expect(() => parseGoDuration(text)).toThrow(/invalid Go duration/);
  });
});

describe("job schedules", () => {
  const start = new Date(2025, 0, 1, 10, 15, 30); // local time, like the Scheduler

  it("runs @every at a fixed interval", () => {
    const schedule = parseSchedule("@every 1m30s");
    expect(nextScheduledTime(schedule, start)).toEqual(new Date(start.getTime() + 90_000));
  });

  it("expands the period macros to their cron equivalents", () => {
    expect(nextScheduledTime(parseSchedule("@hourly"), start)).toEqual(new Date(2025, 0, 1, 11, 0, 0));
    expect(nextScheduledTime(parseSchedule("@daily"), start)).toEqual(new Date(2025, 0, 2, 0, 0, 0));
    expect(nextScheduledTime(parseSchedule("@weekly"), start)).toEqual(new Date(2025, 0, 5, 0, 0, 0)); // Sunday
    expect(nextScheduledTime(parseSchedule("@monthly"), start)).toEqual(new Date(2025, 1, 1, 0, 0, 0));
    expect(nextScheduledTime(parseSchedule("@yearly"), start)).toEqual(new Date(2026, 0, 1, 0, 0, 0));
  });

  it("evaluates 6-field cron with ranges, steps, lists and names", () => {
    expect(nextCronTime(parseCron("0 30 * * * *"), start)).toEqual(new Date(2025, 0, 1, 10, 30, 0));
    expect(nextCronTime(parseCron("0 15 3 * * *"), start)).toEqual(new Date(2025, 0, 2, 3, 15, 0));
    expect(nextCronTime(parseCron("*/20 * * * * *"), start)).toEqual(new Date(2025, 0, 1, 10, 15, 40));
    expect(nextCronTime(parseCron("0 0 9 * * mon-fri"), new Date(2025, 0, 3, 12, 0, 0))).toEqual(
      new Date(2025, 0, 6, 9, 0, 0),
    );
    expect(nextCronTime(parseCron("0 0 0 1,15 feb *"), start)).toEqual(new Date(2025, 1, 1, 0, 0, 0));
  });

  it("rejects schedules it cannot evaluate, naming them", () => {
    expect(() => parseSchedule("@fortnightly")).toThrow(ScheduleError);
    expect(() => parseSchedule("* * * * *")).toThrow(/"\* \* \* \* \*".*expected 6 fields/);
    expect(() => parseSchedule("0 61 * * * *")).toThrow(/minutes value "61"/);
    expect(() => parseSchedule("@every 0s")).toThrow(/positive duration/);
  });

  it("resolves dueTime/ttl given as RFC 3339, Go duration or ISO 8601 duration", () => {
    expect(resolvePointInTime("dueTime", "2030-05-06T07:08:09Z", start)).toEqual(
      new Date(Date.UTC(2030, 4, 6, 7, 8, 9)),
    );
    expect(resolvePointInTime("dueTime", "2030-05-06T07:08:09+02:00", start)).toEqual(
      new Date(Date.UTC(2030, 4, 6, 5, 8, 9)),
    );
    expect(resolvePointInTime("dueTime", "10s", start)).toEqual(new Date(start.getTime() + 10_000));
    expect(resolvePointInTime("ttl", "PT1H30M", start)).toEqual(new Date(start.getTime() + 5_400_000));
    expect(() => resolvePointInTime("dueTime", "tomorrow", start)).toThrow(/unsupported dueTime "tomorrow"/);
  });
});
