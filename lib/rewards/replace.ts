/**
 * The string replacements of reward commands and scripts (docs/client-interface.md §4.10; the tokens of the
 * official addons, docs/client-interface.md §10.2). Pure functions: what a token means, and how a template is filled.
 */
import type { AppliedReward } from "../api/client.ts";
import type { GamePlayer } from "../game/bridge.ts";
import { type Escaping, fillPlaced, writeAt } from "../game/presets/quoting.ts";

/** fillTemplate's escaping (a bridge or a script runner), and what it throws for a token no value may fill. */
export { type Escaping, TemplateError } from "../game/presets/quoting.ts";

/** SteamID64 of STEAM_0:0:0; a SteamID64 is this plus 2 × account number plus the Y bit. */
const STEAM64_BASE = 76561197960265728n;

/** STEAM_0:Y:Z for a SteamID64 (the form GMod's %steamid32% uses); undefined when `id64` is not one. */
export function steamId32(id64: string): string | undefined {
  if (!/^\d{17}$/.test(id64)) return undefined;
  const n = BigInt(id64) - STEAM64_BASE;
  if (n < 0n) return undefined;
  return `STEAM_0:${n % 2n}:${n / 2n}`;
}

/**
 * Every token value for one applied reward and the player it runs for. Values are raw: the caller escapes them
 * for the target console. A token a game cannot fill (%steamid64% outside Steam) is absent and stays as written.
 */
export function rewardValues(reward: AppliedReward, player: GamePlayer, userType: string): Record<string, string> {
  const purchase = reward.applied_packet.purchase;
  const values: Record<string, string> = {
    user_id: reward.user.id,
    applied_packet_id: reward.applied_packet_id,
    packet_title: reward.applied_packet.packet.title,
    purchase_amount: purchase?.amount_text ?? "-",
    nick: player.name,
    player_id: player.id,
    user_type: reward.user.type,
    user_identifier: reward.user.identifier,
  };
  if (userType === "STEAM") {
    values.steamid64 = player.id;
    const id32 = steamId32(player.id);
    if (id32) values.steamid32 = id32;
  }
  return values;
}

const TOKEN = /%([A-Za-z0-9_]+)%/g;

/**
 * Fills `%token%`s in one pass, every value escaped for where it sits (lib/game/presets/quoting.ts: inside the
 * command's quotes, `ulx psay "%nick%" thanks`, it gets no quotes of its own): a value is never scanned again, so a
 * nick like `%user_id%` stays text and `$&` means nothing. Unknown tokens are kept and reported. Throws a
 * TemplateError, naming the token and the fix, for a token where the console's quoting lets no value go.
 */
export function fillTemplate(
  template: string,
  values: Record<string, string>,
  escaping: Escaping,
): { text: string; unknown: string[] } {
  const unknown: string[] = [];
  const text = fillPlaced(template, TOKEN, escaping.quoting, (m, place) => {
    const [whole, name = ""] = m;
    const value = values[name.toLowerCase()];
    if (value === undefined) {
      if (!unknown.includes(whole)) unknown.push(whole);
      return whole;
    }
    return writeAt(escaping, place, value, whole);
  });
  return { text, unknown };
}

/** data.command as console lines: a line break in the template separates commands (like the addons do). */
export function commandLines(command: string): string[] {
  return command
    .split(/\r\n|\r|\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}
