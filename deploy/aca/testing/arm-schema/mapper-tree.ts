import type { Mapper, SdkModel } from "./sdk-mappers.ts";

/**
 * A model's properties as they appear on the wire, nested. The SDK models flatten
 * `x-ms-client-flatten` objects: ContainerApp has `configuration` with the serialized name
 * `properties.configuration`. Bicep writes the wire shape, so the dotted serialized names are
 * split back into a tree (a literal dot in a name is escaped as `\.`, as in @azure/core-client's
 * serializer).
 */
export interface PropertyTree {
  readonly model: string;
  readonly children: Map<string, PropertyNode>;
  /** A model with additionalProperties accepts any other key, of that type. */
  readonly additional?: Mapper;
}

export type PropertyNode = { readonly mapper: Mapper } | { readonly tree: PropertyTree };

export function splitSerializedName(name: string): string[] {
  return name.split(/(?<!\\)\./).map((part) => part.replaceAll("\\.", "."));
}

/** The composite mapper a reference (`{ type: { name: "Composite", className } }`) stands for. */
export function resolveComposite(model: SdkModel, mapper: Mapper, discriminatorValue?: string): Mapper {
  let resolved = mapper;
  if (resolved.type.modelProperties === undefined && resolved.type.className !== undefined) {
    const found = model.mappers[resolved.type.className];
    if (found === undefined)
      throw new Error(`model ${resolved.type.className} not found in the SDK's mappers`);
    resolved = found;
  }
  const parent = resolved.type.uberParent ?? resolved.type.className;
  if (discriminatorValue !== undefined && resolved.type.polymorphicDiscriminator !== undefined) {
    const subtype = model.discriminators[`${parent}.${discriminatorValue}`];
    if (subtype !== undefined) return resolveComposite(model, subtype);
  }
  return resolved;
}

export function propertyTree(
  model: SdkModel,
  composite: Mapper,
  extra: Readonly<Record<string, string>> = {},
): PropertyTree {
  const resolved = resolveComposite(model, composite);
  const root: PropertyTree = {
    model: resolved.type.className ?? "object",
    children: new Map(),
    ...(resolved.type.additionalProperties === undefined
      ? {}
      : { additional: resolved.type.additionalProperties }),
  };
  const entries: [string, Mapper][] = Object.entries(resolved.type.modelProperties ?? {}).map(
    ([clientName, mapper]) => [mapper.serializedName ?? clientName, mapper],
  );
  for (const [path, type] of Object.entries(extra))
    entries.push([path, { serializedName: path, type: { name: type } }]);
  for (const [serializedName, mapper] of entries) {
    const segments = splitSerializedName(serializedName);
    let tree = root;
    for (const segment of segments.slice(0, -1)) {
      const existing = tree.children.get(segment);
      if (existing !== undefined && "mapper" in existing)
        throw new Error(
          `${root.model}: ${serializedName} is flattened under a property that is a model itself`,
        );
      const next = existing ?? { tree: { model: `${tree.model}.${segment}`, children: new Map() } };
      tree.children.set(segment, next);
      tree = (next as { tree: PropertyTree }).tree;
    }
    tree.children.set(segments.at(-1)!, { mapper });
  }
  return root;
}
