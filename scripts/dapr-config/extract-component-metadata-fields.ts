/**
 * Regenerates component-metadata-fields.json: the metadata field names each component type and
 * version that components/ uses can read, from components-contrib's `metadata.yaml` files.
 *
 *   npx tsx scripts/dapr-config/extract-component-metadata-fields.ts <components-contrib git dir> <tag>...
 *
 * e.g. `… ~/src/components-contrib/.git v1.16.13 v1.18.4` (the ends of the supported Dapr range).
 * A field is kept only when every given release knows it, so a file that passes works on each.
 * Run it again when components/ starts using another component type or the supported range moves.
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { componentSchema } from "./dapr-config-schemas.ts";
import { loadDaprFiles } from "./load-dapr-files.ts";
import { componentFieldsKey, type ComponentMetadataFields } from "./component-metadata-fields.ts";

interface MetadataList {
  readonly metadata?: readonly { readonly name: string }[];
}
interface ComponentMetadataYaml extends MetadataList {
  readonly type: string;
  readonly name: string;
  readonly version: string;
  readonly capabilities?: readonly string[];
  readonly authenticationProfiles?: readonly MetadataList[];
  readonly builtinAuthenticationProfiles?: readonly (MetadataList & { readonly name: string })[];
}

const [gitDir, ...tags] = process.argv.slice(2);
if (gitDir === undefined || tags.length === 0) {
  console.error("usage: extract-component-metadata-fields.ts <components-contrib git dir> <tag>...");
  process.exit(2);
}
const git = (...args: string[]): string =>
  execFileSync("git", ["--git-dir", gitDir, ...args], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });

const root = resolve(import.meta.dirname, "..", "..");
const used = new Set<string>();
for (const document of await loadDaprFiles(root)) {
  const parsed = componentSchema.safeParse(document.value);
  if (parsed.success) used.add(componentFieldsKey(parsed.data.spec.type, parsed.data.spec.version));
}

const namesOf = (list: MetadataList | undefined): string[] => (list?.metadata ?? []).map((item) => item.name);

/**
 * What components-contrib's build tools add to every component of a kind
 * (.build-tools/pkg/metadataschema/validators.go, AppendBuiltin): daprd reads these itself.
 */
function builtinFields(component: ComponentMetadataYaml): string[] {
  if (component.type === "state") {
    const capabilities = component.capabilities ?? [];
    return [
      ...(capabilities.includes("actorStateStore") ? ["actorStateStore"] : []),
      ...(capabilities.includes("transactional")
        ? ["outboxPublishPubsub", "outboxPublishTopic", "outboxPubsub", "outboxDiscardWhenMissingState"]
        : []),
      "keyPrefix",
    ];
  }
  if (component.type === "pubsub") {
    return ["consumerID", "allowedTopics", "publishingScopes", "subscriptionScopes", "protectedTopics"];
  }
  return [];
}

function fieldsAt(tag: string): Map<string, Set<string>> {
  const builtinProfiles = parse(
    git("show", `${tag}:.build-tools/builtin-authentication-profiles.yaml`),
  ) as Record<string, readonly MetadataList[]>;
  const files = git("ls-tree", "-r", "--name-only", tag)
    .split("\n")
    .filter((path) => path.endsWith("/metadata.yaml") && !path.startsWith(".build-tools/"));
  const result = new Map<string, Set<string>>();
  for (const file of files) {
    const component = parse(git("show", `${tag}:${file}`)) as ComponentMetadataYaml | null;
    if (!component?.type || !component.name || !component.version) continue;
    const key = componentFieldsKey(`${component.type}.${component.name}`, component.version);
    if (!used.has(key)) continue;
    const fields = new Set<string>([
      ...namesOf(component),
      ...(component.authenticationProfiles ?? []).flatMap(namesOf),
      ...(component.builtinAuthenticationProfiles ?? []).flatMap((profile) => [
        ...namesOf(profile),
        ...(builtinProfiles[profile.name] ?? []).flatMap(namesOf),
      ]),
      ...builtinFields(component),
    ]);
    result.set(key, fields);
  }
  return result;
}

const perTag = tags.map((tag) => ({ tag, fields: fieldsAt(tag) }));
const components: Record<string, string[]> = {};
for (const key of [...used].sort()) {
  const sets = perTag.map(({ tag, fields }) => {
    const found = fields.get(key);
    if (found === undefined) throw new Error(`${key} has no metadata.yaml in components-contrib ${tag}`);
    return found;
  });
  const [first, ...rest] = sets as [Set<string>, ...Set<string>[]];
  components[key] = [...first].filter((name) => rest.every((set) => set.has(name))).sort();
}

const data: ComponentMetadataFields = {
  source: `components-contrib metadata.yaml at ${tags.join(", ")} (fields every release knows)`,
  components,
};
const out = join(import.meta.dirname, "component-metadata-fields.json");
await writeFile(out, `${JSON.stringify(data, null, 2)}\n`);
console.log(`wrote ${Object.keys(components).length} component field lists to ${out}`);
