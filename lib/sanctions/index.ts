/**
 * Bans, unbans and warnings (docs/client-interface.md rules 9–12), shared by `run` (lib/features/bans.ts) and the
 * one-shot CLI commands.
 *
 * Typical use:
 * - issue:    `queueBan(store, {target, length, reason, creator, serverbundleId, enforce})` (or queueUnban /
 *             queueWarning): durable first; `enforce` says whether it counts here before delivery; then
 * - deliver:  `deliverQueues({api, store}, {onOutcome})`: one exclusive round over all three queues (any process);
 *             `report.busy` when another process held the round longer than `lockTimeoutMs`. Find your own entry's
 *             fate by `outcome.entry.id`; no outcome for it means it is still queued (or another process settled it).
 * - tell:     `outcomeMessage(messages, outcome)` is the creator's sentence.
 * - enforce:  `fetchBanList` (live, else cached), `isBanned(store, list, playerId, now)`, `banMessage(messages, v)`.
 * - signal:   `markSanctionsChanged(store, kinds)` after a one-shot round; `run` watches it (`changeTracker`,
 *             `watchSanctionsChanged`) and refreshes its ban list at once.
 * - read:     `listWarnings(api, target, bundleId)` + `formatWarnings(messages, name, warnings)` for `warns`.
 */
export * from "./schemas.ts";
export * from "./queue.ts";
export * from "./deliver.ts";
export { deliverQueues } from "./round.ts";
export * from "./banlist.ts";
export * from "./warnings.ts";
export * from "./report.ts";
export * from "./changed.ts";
export * from "./own-entry.ts";
