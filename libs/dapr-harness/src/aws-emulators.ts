import { existsSync } from "node:fs";
import { join } from "node:path";
import { daprCacheRoot } from "./dapr-cache.ts";
import { startDynalite, type HarnessDynalite } from "./dynalite.ts";
import { EMULATOR_CREDENTIALS } from "./aws-signed-request.ts";
import { GOAWS_ACCOUNT_ID, goawsBinary, startGoaws, type HarnessGoaws } from "./goaws.ts";
import type { MetadataOverrides } from "./render-resources.ts";

/** The region components/aws ships with; the emulators answer for it. */
export const AWS_PROFILE_REGION = "eu-west-1";

/** The table components/aws/statestore.yaml names. */
export const AWS_PROFILE_TABLE = "matoolkit-state";

/**
 * The AWS emulators of one test: goaws (SNS + SQS) and dynalite (DynamoDB, with the state table
 * created), each on a free loopback port with its data under `dataDir`.
 */
export interface AwsEmulators {
  readonly goaws: HarnessGoaws;
  readonly dynalite: HarnessDynalite;
  /**
   * What changes in components/aws to run on them; everything else stays as shipped:
   * - `endpoint`: the components' documented field for an emulator (components-contrib
   *   pubsub/aws/snssqs and state/aws/dynamodb metadata.yaml).
   * - pub/sub `accountID`: without it the component asks STS (sts:GetCallerIdentity) for the
   *   account at init, an API goaws does not serve; a real AWS user may set it too.
   */
  readonly overrides: MetadataOverrides;
  /**
   * The sidecar's environment: dummy keys through the AWS default credential chain, as
   * components/aws expects credentials (never in the component), and no instance metadata
   * look-up (a link-local address the harness must not call).
   */
  readonly sidecarEnv: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

export async function startAwsEmulators(options: {
  readonly dataDir: string;
  /** The test process's environment: where `npm run dapr:install` put goaws. */
  readonly processEnv: Readonly<Record<string, string | undefined>>;
}): Promise<AwsEmulators> {
  const binary = goawsBinary(daprCacheRoot(options.processEnv));
  if (!existsSync(binary)) {
    throw new Error(`goaws is not built (missing ${binary}): run npm run dapr:install`);
  }
  const goaws = await startGoaws({
    binary,
    dataDir: join(options.dataDir, "goaws"),
    region: AWS_PROFILE_REGION,
  });
  try {
    const dynalite = await startDynalite({
      dataDir: join(options.dataDir, "dynalite"),
      region: AWS_PROFILE_REGION,
    });
    try {
      await dynalite.createStateTable(AWS_PROFILE_TABLE);
    } catch (error) {
      await dynalite.stop();
      throw error;
    }
    return {
      goaws,
      dynalite,
      overrides: {
        "matoolkit-pubsub": { endpoint: goaws.endpoint, accountID: GOAWS_ACCOUNT_ID },
        "matoolkit-state": { endpoint: dynalite.endpoint },
      },
      sidecarEnv: {
        AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
        AWS_EC2_METADATA_DISABLED: "true",
      },
      async stop() {
        await dynalite.stop();
        await goaws.stop();
      },
    };
  } catch (error) {
    await goaws.stop();
    throw error;
  }
}
