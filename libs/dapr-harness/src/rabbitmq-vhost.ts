import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A RabbitMQ virtual host of one test's own on the machine's broker: exchanges and queues are
 * per vhost, so test files running side by side never see each other's topics.
 */
export interface RabbitMqVhost {
  readonly name: string;
  /** amqp URL of the vhost, as the machine's guest account (loopback only). */
  readonly url: string;
  delete(): Promise<void>;
}

export async function createRabbitMqVhost(options: {
  readonly host?: string;
  readonly port?: number;
  readonly rabbitmqctl?: string;
}): Promise<RabbitMqVhost> {
  const ctl = options.rabbitmqctl ?? "rabbitmqctl";
  const name = `matoolkit-${randomBytes(4).toString("hex")}`;
  try {
    await run(ctl, ["add_vhost", name]);
    await run(ctl, ["set_permissions", "-p", name, "guest", ".*", ".*", ".*"]);
  } catch (error) {
    throw new Error(
      `cannot create a RabbitMQ vhost with ${ctl} (is RabbitMQ running and are you allowed to administer it?): ${(error as { stderr?: string }).stderr ?? String(error)}`,
    );
  }
  return {
    name,
    url: `amqp://guest:guest@${options.host ?? "127.0.0.1"}:${options.port ?? 5672}/${encodeURIComponent(name)}`,
    async delete() {
      await run(ctl, ["delete_vhost", name]).catch(() => undefined);
    },
  };
}
