export * from "./address-ranges.ts";
export * from "./allowed-destinations.ts";
export * from "./outbound-errors.ts";
export * from "./outbound-policy.ts";
export * from "./outbound-url.ts";
export * from "./pinned-request.ts";
export * from "./webhook-outbound-config.ts";
