export * from "./notification.ts";
