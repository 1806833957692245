import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { runInNewContext } from "node:vm";
import { buildSync } from "esbuild";
import type { SdkSchema } from "./coverage.ts";

/**
 * Reads a resource type's request body model out of an installed @azure/arm-* package. The
 * AutoRest-generated packages (https://github.com/Azure/autorest.typescript) keep the models as
 * serializer mappers in models/mappers.js and the operations' parameters in
 * models/parameters.js; the create operation's spec in operations/<group>.js names its body
 * parameter and its api-version parameter. Neither file is exported by the package, and older
 * releases ship them only as ES modules without "type": "module", so esbuild bundles the two
 * files into one CommonJS script that runs in a fresh context.
 */

/** The shape of @azure/core-client's Mapper, as far as the checks read it. */
export interface Mapper {
  readonly serializedName?: string;
  readonly readOnly?: boolean;
  readonly required?: boolean;
  readonly isConstant?: boolean;
  readonly constraints?: Readonly<Record<string, unknown>>;
  readonly type: MapperType;
}

export interface MapperType {
  readonly name: string;
  readonly className?: string;
  readonly modelProperties?: Readonly<Record<string, Mapper>>;
  readonly additionalProperties?: Mapper;
  readonly element?: Mapper;
  readonly value?: Mapper;
  readonly allowedValues?: readonly unknown[];
  readonly uberParent?: string;
  readonly polymorphicDiscriminator?: { readonly serializedName: string };
}

export interface SdkModel {
  readonly apiVersion: string;
  readonly body: Mapper;
  /** Every model of the package by class name (references, discriminated subtypes). */
  readonly mappers: Readonly<Record<string, Mapper>>;
  readonly discriminators: Readonly<Record<string, Mapper>>;
}

const modules = new Map<
  string,
  { parameters: Record<string, { mapper: Mapper }>; mappers: Record<string, unknown> }
>();

export function sdkModel(repoRoot: string, schema: SdkSchema): SdkModel {
  const packageDir = join(repoRoot, "node_modules", ...schema.sdk.split("/"));
  const installed = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string };
  if (installed.version !== schema.sdkVersion)
    throw new Error(
      `${schema.sdk} ${installed.version} is installed, the checks expect ${schema.sdkVersion} (run npm ci)`,
    );
  // Newer releases build with tshy (dist/commonjs), older ones with rollup (dist-esm/src), the
  // oldest (@azure/ms-rest-js based, e.g. @azure/arm-monitor 6.0.0) with tsc into esm/.
  const sourceDir = ["dist/commonjs", "dist-esm/src", "esm"]
    .map((dir) => join(packageDir, dir))
    .find((dir) => existsSync(join(dir, "models", "mappers.js")));
  if (sourceDir === undefined)
    throw new Error(`${schema.sdk} ${schema.sdkVersion} ships no models/mappers.js`);
  const spec = operationSpec(join(sourceDir, "operations", `${schema.operationGroup}.js`), schema);
  const loaded = loadModels(sourceDir);
  const body =
    "mapperClass" in spec
      ? (loaded.mappers as Record<string, Mapper>)[spec.mapperClass]
      : loaded.parameters[spec.body]?.mapper;
  const apiVersion = (loaded.parameters[spec.apiVersion]?.mapper as { defaultValue?: string } | undefined)
    ?.defaultValue;
  if (body === undefined || apiVersion === undefined)
    throw new Error(
      `${schema.sdk}: parameters ${spec.body} / ${spec.apiVersion} not found in models/parameters.js`,
    );
  const { discriminators, ...mappers } = loaded.mappers as Record<string, Mapper> & {
    discriminators?: Record<string, Mapper>;
  };
  return { apiVersion, body, mappers, discriminators: discriminators ?? {} };
}

/**
 * The names of the body and api-version parameters in `const <spec> = { … };`; the oldest
 * releases (`var <spec> = { … }`) give the body inline: `requestBody: { …, mapper: …Mappers.<Class> … }`.
 */
function operationSpec(
  file: string,
  schema: SdkSchema,
): { body: string; apiVersion: string } | { mapperClass: string; body: string; apiVersion: string } {
  const text = readFileSync(file, "utf8");
  const declared = [`const ${schema.operationSpec} = {`, `var ${schema.operationSpec} = {`].map((head) =>
    text.indexOf(head),
  );
  const start = declared.find((index) => index !== -1);
  if (start === undefined) throw new Error(`${schema.sdk}: no ${schema.operationSpec} in ${file}`);
  const block = text.slice(start, text.indexOf("\n};", start));
  const inline = /requestBody: \{[^;]*?Mappers\.(\w+)/.exec(block)?.[1];
  const apiVersionName = /queryParameters: \[[^\]]*Parameters\.(apiVersion\w*)/.exec(block)?.[1];
  if (inline !== undefined && apiVersionName !== undefined)
    return { mapperClass: inline, body: inline, apiVersion: apiVersionName };
  const body = /requestBody: Parameters\.(\w+)/.exec(block)?.[1];
  const apiVersion = /queryParameters: \[[^\]]*Parameters\.(apiVersion\w*)/.exec(block)?.[1];
  if (body === undefined || apiVersion === undefined)
    throw new Error(`${schema.sdk}: ${schema.operationSpec} in ${file} has no request body or api-version`);
  return { body, apiVersion };
}

function loadModels(sourceDir: string) {
  const cached = modules.get(sourceDir);
  if (cached !== undefined) return cached;
  const entry = [
    `export * as parameters from ${JSON.stringify(join(sourceDir, "models", "parameters.js"))};`,
    `export * as mappers from ${JSON.stringify(join(sourceDir, "models", "mappers.js"))};`,
  ].join("\n");
  const output = buildSync({
    stdin: { contents: entry, resolveDir: sourceDir, loader: "js" },
    bundle: true,
    format: "cjs",
    platform: "node",
    write: false,
    logLevel: "silent",
    // parameters.js imports only the mappers and, in some releases, @azure/core-client's types.
    external: ["@azure/*", "tslib"],
  });
  const module = { exports: {} as Record<string, unknown> };
  // The oldest releases spread mappers with tslib's __assign: the real one; anything else is types only.
  const requireFrom = createRequire(join(sourceDir, "index.js"));
  const require = (name: string): unknown => (name === "tslib" ? requireFrom("tslib") : {});
  runInNewContext(output.outputFiles[0]!.text, { module, exports: module.exports, require });
  const loaded = module.exports as {
    parameters: Record<string, { mapper: Mapper }>;
    mappers: Record<string, unknown>;
  };
  modules.set(sourceDir, loaded);
  return loaded;
}
