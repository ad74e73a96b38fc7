/**
 * What the operations (sanction.ts) answer with: a typed outcome a caller renders, and cli/ maps to an exit code in
 * one table (cli/sanction.ts). A status names what a script tells apart; the sentence is for people.
 */
import type { Creator, PlayerRef } from "../sanctions/index.ts";

export type { Creator, PlayerRef };

/** Nothing was done, or the entry's own round ended badly: the sentence says why, the status what a script tells. */
export interface Failed {
  status:
    | "invalid" // the input (a length, a player's spelling)
    | "ambiguous" // a nick several players match
    | "not_found" // no such player (here, or at the service)
    | "unreachable" // the service did not answer where it had to
    | "refused" // the service refused (a lookup, the sanction: the --as user's permission)
    | "cancelled" // the entry was lifted before it was sent (an unban meanwhile)
    | "failed" // the serverbundle is unknown
    | "credentials"; // the service refused this agent's key or server id: queued, nothing lost, the operator's to fix
  message: string;
}

export interface IssuedBase {
  /** Delivered by this round, settled by another process meanwhile, or queued (sent later). */
  status: "delivered" | "elsewhere" | "queued";
  entryId: string;
  target: PlayerRef;
  /** Whose permissions the service checked (--as); null for the console. */
  creator: Creator | null;
  /** The sentence: what the service did, or that the entry waits (and why); "" when none is said (Session.sentences). */
  message: string;
  /** Lines after it: the queued bans an unban cancelled, the service's automatic ban after a warning. */
  notes: string[];
  /** What kept it queued (or what its round met). */
  error?: string;
}
export interface BanIssued extends IssuedBase {
  kind: "ban";
  /** null: permanent. */
  seconds: number | null;
  length: string;
  reason: string;
  banId?: string;
}
export interface WarningIssued extends IssuedBase {
  kind: "warning";
  reason: string;
  warningId?: string;
  /** Whether the service banned the player because of this warning (null: not known). */
  autoBanned: boolean | null;
}
export interface UnbanIssued extends IssuedBase {
  kind: "unban";
  /** Queued bans of the player that will now never be sent. */
  cancelled: number;
}
export type Issued = BanIssued | WarningIssued | UnbanIssued;

/** A player's warnings, as `warns` shows them. */
export interface Listed {
  status: "listed";
  target: PlayerRef;
  total: number;
  warnings: {
    id: string;
    reason: string | null;
    creator: { user_id: string; name: string | null } | null;
    created_on: string;
    active: boolean;
    disabled: boolean;
    serverbundle_id: string | null;
  }[];
  /** The lines for people (lang warns.*). */
  lines: string[];
}

const SETTLED = new Set<string>(["delivered", "elsewhere", "queued", "listed"]);
/** Whether the outcome is a failure (nothing done, or the entry's round ended badly). */
export const failed = <O extends { status: string }>(o: O | Failed): o is Failed => !SETTLED.has(o.status);

/** Every status an operation answers with. */
export type Status = Failed["status"] | Issued["status"] | Listed["status"];
