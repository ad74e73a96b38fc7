/**
 * valibot schemas for the VyHub response models (docs/service-api.md §4), and the request bodies: the index importers
 * use, over one module a domain (users and groups, bans and warnings, rewards, this server) and their shared parts.
 * Lenient on purpose: the service grows fields and enum values between releases, so objects are loose, every optional
 * field is nullish and enums are open (known values ∪ any string). Request bodies are sent as typed JSON; the service
 * would coerce strings, but we don't rely on it.
 */
export { collectSkipped, lenientArray, lenientListMap, pageSchema, type Page, type SkippedItem } from "./lenient.ts";
export * from "./schemas-common.ts";
export * from "./schemas-users.ts";
export * from "./schemas-sanctions.ts";
export * from "./schemas-rewards.ts";
export * from "./schemas-server.ts";
export * from "./schemas-adverts.ts";
