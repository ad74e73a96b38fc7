/** The sentence that tells a sanction's creator what became of it (rule 10: "the ban creator is informed"). */
import { formatLength } from "../duration.ts";
import type { MessageKey, Messages } from "../messages.ts";
import type { DeliveryOutcome } from "./deliver.ts";
import { type Enforce, playerLabel } from "./schemas.ts";

/** "permanently" / "for 1d 12h", for ban.queued and ban.delivered. */
export function lengthText(messages: Messages, seconds: number | null): string {
  return seconds === null ? messages.t("ban.permanent") : messages.t("ban.for", { duration: formatLength(seconds) });
}

/** What a queued ban or unban's answer says: in effect here now, or once VyHub accepts it (chat and the CLI alike). */
export const queuedKey = (kind: "ban" | "unban", enforce: Enforce): MessageKey =>
  enforce === "now" ? `${kind}.queued` : `${kind}.queued_on_accept`;

/** The creator's message for a settled entry; undefined for `kept` (it is retried; queue status shows why). */
export function outcomeMessage(messages: Messages, o: DeliveryOutcome): string | undefined {
  const player = playerLabel(o.entry.data.target);
  const error = o.error ?? "";
  if (o.result === "kept") return undefined;
  if (o.kind === "ban") {
    const reason = o.entry.data.reason;
    if (o.result === "delivered")
      return messages.t("ban.delivered", { player, length: lengthText(messages, o.entry.data.length), reason });
    if (o.result === "cancelled") return messages.t("ban.cancelled", { player });
    if (o.result === "not_found") return messages.t("ban.user_not_found", { player });
    return messages.t("ban.refused", { player, error });
  }
  if (o.kind === "unban") {
    if (o.result === "delivered")
      return messages.t(o.nothingToLift ? "unban.nothing_to_lift" : "unban.delivered", { player });
    if (o.result === "not_found") return messages.t("unban.user_not_found", { player });
    return messages.t("unban.refused", { player, error });
  }
  if (o.result === "delivered") {
    const creator = o.entry.data.creator?.name || messages.t("ban.console");
    return messages.t("warn.delivered", { player, creator, reason: o.entry.data.reason });
  }
  if (o.result === "not_found") return messages.t("warn.user_not_found", { player });
  return messages.t("warn.refused", { player, error });
}
