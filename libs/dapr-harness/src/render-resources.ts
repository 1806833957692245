import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments, stringify } from "yaml";

/** Metadata values to set, by component name then metadata name (e.g. a Redis on another port). */
export type MetadataOverrides = Readonly<Record<string, Readonly<Record<string, string>>>>;

/**
 * Copies the repository's Dapr resources (a component profile such as components/local, and
 * dapr/resources) into `targetDir`, changing only the metadata values the harness must point
 * elsewhere (its own Redis, a vhost, a test database). The files tested are the files shipped:
 * every other field stays as written. A named override the files do not have is an error, so a
 * renamed component or field cannot silently leave a test on the machine's shared services.
 */
export function renderDaprResources(options: {
  readonly sourceDirs: readonly string[];
  readonly targetDir: string;
  readonly overrides?: MetadataOverrides;
}): void {
  mkdirSync(options.targetDir, { recursive: true });
  const overrides = options.overrides ?? {};
  const applied = new Set<string>();
  for (const dir of options.sourceDirs) {
    for (const file of readdirSync(dir).filter((name) => /\.ya?ml$/.test(name))) {
      const documents = parseAllDocuments(readFileSync(join(dir, file), "utf8")).map((document) => {
        const resource = document.toJS() as {
          kind?: string;
          metadata?: { name?: string };
          spec?: { metadata?: Array<{ name: string; value?: unknown }> };
        } | null;
        const name = resource?.metadata?.name;
        const wanted = name === undefined ? undefined : overrides[name];
        if (resource?.kind === "Component" && wanted !== undefined) {
          const items = (resource.spec ??= {}).metadata ?? (resource.spec.metadata = []);
          for (const [field, value] of Object.entries(wanted)) {
            const item = items.find((candidate) => candidate.name === field);
            if (item === undefined) items.push({ name: field, value });
            else item.value = value;
            applied.add(`${name}.${field}`);
          }
        }
        return resource;
      });
      writeFileSync(
        join(options.targetDir, file),
        documents
          .filter((resource) => resource !== null)
          .map((resource) => stringify(resource))
          .join("---\n"),
      );
    }
  }
  for (const [component, fields] of Object.entries(overrides)) {
    if (!Object.keys(fields).some((field) => applied.has(`${component}.${field}`))) {
      throw new Error(`no component named ${component} in ${options.sourceDirs.join(", ")}`);
    }
  }
}

/**
 * Copies a Dapr Configuration (dapr/config.yaml as shipped) with one change: name resolution is a
 * SQLite file of this sidecar's own (components-contrib nameresolution/sqlite), never mDNS, which
 * would announce every test's sidecar on the network. Returns the path written.
 */
export function renderDaprConfiguration(options: {
  readonly source: string;
  readonly targetDir: string;
  /** Replaces `spec.tracing.samplingRate` ("0": daprd records no span of its own). */
  readonly tracingSamplingRate?: string;
}): string {
  mkdirSync(options.targetDir, { recursive: true });
  const configuration = parseAllDocuments(readFileSync(options.source, "utf8"))[0]?.toJS() as {
    spec?: Record<string, unknown>;
  };
  const spec = (configuration.spec ??= {});
  if (options.tracingSamplingRate !== undefined) {
    spec.tracing = {
      ...(spec.tracing as Record<string, unknown> | undefined),
      samplingRate: options.tracingSamplingRate,
    };
  }
  spec.nameResolution = {
    component: "sqlite",
    configuration: { connectionString: join(options.targetDir, "nameresolution.db") },
  };
  const target = join(options.targetDir, "config.yaml");
  writeFileSync(target, stringify(configuration));
  return target;
}
