import { InvalidArgumentError, type Command } from "commander";
import { notificationTypes } from "@matoolkit/domain";
import { z } from "zod";
import { apiPath } from "../http/api-client.ts";
import { action, type CommandRuntime } from "./action.ts";
import { positiveId } from "./arguments.ts";
import { readAs } from "./views.ts";

/**
 * The notification types a webhook can take (the server checks them too, naming the bad one):
 * the domain's list, so a new type (the alerts' `alert.raised` / `alert.resolved`, issue 31) is
 * never refused here while the server takes it.
 */
const EVENT_TYPES: readonly string[] = notificationTypes;

const webhookView = z.looseObject({
  id: z.number(),
  url: z.string(),
  runbookName: z.string().nullable(),
  events: z.array(z.string()),
  enabled: z.boolean(),
  createdBy: z.string().nullable(),
  createdAt: z.string(),
});

const deliveryPageView = z.looseObject({
  items: z.array(
    z.looseObject({
      id: z.number(),
      event: z.string(),
      status: z.string(),
      attempt: z.number(),
      httpStatus: z.number().nullable(),
      errorCode: z.string().nullable(),
      nextAttemptAt: z.string().nullable(),
      createdAt: z.string(),
      finishedAt: z.string().nullable(),
    }),
  ),
  nextAfterId: z.number().nullable(),
});

/** `--events a,b`: comma-separated notification types. */
function eventList(value: string): string[] {
  const events = value
    .split(",")
    .map((event) => event.trim())
    .filter((event) => event !== "");
  const unknown = events.filter((event) => !EVENT_TYPES.includes(event));
  if (events.length === 0 || unknown.length > 0) {
    throw new InvalidArgumentError(`must be a comma-separated list of ${EVENT_TYPES.join(", ")}.`);
  }
  return events;
}

/** Issue 12: webhook add | list | remove | deliveries | test (Admin). */
export function registerWebhookCommands(program: Command, runtime: CommandRuntime): void {
  const webhook = program
    .command("webhook")
    .description("webhooks notified of batch and phase outcomes and member failures");

  webhook
    .command("add")
    .description("register a webhook; prints its signing secret, which is shown this once")
    .argument(
      "<url>",
      "http(s) URL the notifications are POSTed to; loopback, private and link-local addresses are refused unless MATOOLKIT_WEBHOOK_ALLOWED_HOSTS on the server allows them",
    )
    .requiredOption("--events <types>", `comma-separated: ${EVENT_TYPES.join(", ")}`, eventList)
    .option("--runbook <name>", "only this runbook's batches (default: every runbook)")
    .action(
      action(runtime, async (session, url: string, options: { events: string[]; runbook?: string }) => {
        const created = await session.api().json("POST", "/webhooks", {
          body: { json: { url, events: options.events, runbookName: options.runbook } },
        });
        session.output.result(created, (value) => {
          const hook = readAs(webhookView.extend({ secret: z.string() }), value, "webhook");
          session.output.fields([
            ["Webhook", hook.id],
            ["URL", hook.url],
            ["Runbook", hook.runbookName ?? "(every runbook)"],
            ["Events", hook.events.join(", ")],
            ["Secret", hook.secret],
          ]);
          session.output.line();
          session.output.line("Store the secret now: it is not shown again. It signs X-Matoolkit-Signature.");
        });
      }),
    );

  webhook
    .command("list")
    .description("list webhooks (never their secrets)")
    .action(
      action(runtime, async (session) => {
        const list = await session.api().json("GET", "/webhooks");
        session.output.result(list, (value) =>
          session.output.table(
            readAs(z.array(webhookView), value, "webhook list"),
            [
              { header: "ID", value: (w) => w.id, align: "right" },
              { header: "RUNBOOK", value: (w) => w.runbookName ?? "*" },
              { header: "EVENTS", value: (w) => w.events.join(",") },
              { header: "ENABLED", value: (w) => w.enabled },
              { header: "CREATED BY", value: (w) => w.createdBy },
              { header: "URL", value: (w) => w.url, shrink: true },
            ],
            "No webhooks.",
          ),
        );
      }),
    );

  webhook
    .command("remove")
    .description("delete a webhook: no more deliveries, pending retries given up; its delivery history stays")
    .argument("<id>", "webhook id", positiveId)
    .action(
      action(runtime, async (session, id: number) => {
        const deleted = await session.api().json("DELETE", apiPath("webhooks", id));
        session.output.result(deleted, () => session.output.line(`Webhook ${id} deleted.`));
      }),
    );

  webhook
    .command("deliveries")
    .description("a webhook's deliveries, oldest first, with their last attempt")
    .argument("<id>", "webhook id", positiveId)
    .option("--after-id <id>", "only deliveries after this id", positiveId)
    .option("--limit <n>", "how many (1-500, server default 100)", positiveId)
    .action(
      action(runtime, async (session, id: number, options: { afterId?: number; limit?: number }) => {
        const page = await session.api().json("GET", apiPath("webhooks", id, "deliveries"), {
          query: { afterId: options.afterId, limit: options.limit },
        });
        session.output.result(page, (value) => {
          const { items, nextAfterId } = readAs(deliveryPageView, value, "delivery page");
          session.output.table(
            items,
            [
              { header: "ID", value: (d) => d.id, align: "right" },
              { header: "EVENT", value: (d) => d.event },
              { header: "STATUS", value: (d) => d.status },
              { header: "ATTEMPTS", value: (d) => d.attempt, align: "right" },
              { header: "HTTP", value: (d) => d.httpStatus, align: "right" },
              { header: "ERROR", value: (d) => d.errorCode },
              { header: "NEXT ATTEMPT", value: (d) => d.nextAttemptAt },
              { header: "CREATED", value: (d) => d.createdAt },
            ],
            "No deliveries.",
          );
          if (nextAfterId !== null) {
            session.output.line(`More: matoolkit webhook deliveries ${id} --after-id ${nextAfterId}`);
          }
        });
      }),
    );

  webhook
    .command("test")
    .description("send the webhook a signed ping (queued; see `webhook deliveries` for the answer)")
    .argument("<id>", "webhook id", positiveId)
    .action(
      action(runtime, async (session, id: number) => {
        const ping = await session.api().json("POST", apiPath("webhooks", id, "test"));
        session.output.result(ping, (value) => {
          const queued = readAs(z.looseObject({ deliveryId: z.number() }), value, "ping");
          session.output.line(`Ping queued as delivery ${queued.deliveryId}.`);
        });
      }),
    );
}
