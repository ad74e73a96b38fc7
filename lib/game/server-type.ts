/**
 * Which of VyHub's server types suits the configured game (docs/games.md, "The server at VyHub"): a preset's own
 * type (`Preset.serverType`), else the types whose players VyHub knows by the preset's user type (the service's
 * user-type mapping, docs/service-api.md §2.2), else SOURCE for a game VyHub has no type for. `doctor` warns when
 * the server's record has another: hub-agent itself never reads the type, but VyHub offers the shop and the user
 * mapping of that type (a GMOD server's shop sells SCRIPT rewards, Lua that only Garry's Mod runs).
 */
import type { Check } from "../check.ts";
import type { Preset } from "./presets/types.ts";

/** `GET /server/user-type-mapping`: the user type of each game server type's players. */
const USER_TYPE_OF: Readonly<Record<string, string>> = {
  GMOD: "STEAM",
  RUST: "STEAM",
  SEVEN_DAYS: "STEAM",
  SOURCE: "STEAM",
  MINECRAFT: "MINECRAFT",
  FIVEM: "FIVEM",
  ASA: "ASA",
};

/** What each server type is for, as an operator reads it. */
const MADE_FOR: Readonly<Record<string, string>> = {
  GMOD: "Garry's Mod",
  MINECRAFT: "Minecraft",
  RUST: "Rust",
  SOURCE: "Source engine games",
  SEVEN_DAYS: "7 Days to Die",
  ASA: "ARK: Survival Ascended",
  FIVEM: "FiveM",
  TEAMSPEAK3: "TeamSpeak 3",
  DISCORD: "Discord",
};

/** The type for a game VyHub has none for: a plain console game server, no Lua shop. */
export const NO_TYPE_OF_ITS_OWN = "SOURCE";

/** The server types that suit `preset` (its overrides applied), the one to choose first. */
export function serverTypesFor(preset: Preset): string[] {
  if (preset.serverType) return [preset.serverType];
  const byUsers = Object.keys(USER_TYPE_OF).filter((t) => USER_TYPE_OF[t] === preset.userType);
  return byUsers.length ? byUsers : [NO_TYPE_OF_ITS_OWN];
}

/** A warning when the server's record has a type that does not suit the preset; nothing when it does. */
export function checkServerType(preset: Preset, serverType: string): Check | undefined {
  const suits = serverTypesFor(preset);
  if (suits.includes(serverType)) return undefined;
  const made = MADE_FOR[serverType];
  const game = `game.preset = "${preset.name}" (${preset.title})`;
  const wants = preset.serverType
    ? `is ${preset.serverType}'s`
    : suits.length > 1
      ? `knows players by ${preset.userType} ids: ${suits.slice(0, -1).join(", ")} or ${suits.at(-1)} suit it`
      : `has no type of its own: VyHub's ${suits[0]} suits it`;
  return {
    name: "server",
    status: "warn",
    message: `the server's type at VyHub is ${serverType}${made ? ` (${made}'s)` : ""}, but ${game} ${wants}`,
    fix: `create the server in VyHub with the type ${suits[0]} and put its id in api.server_id, or set game.preset to the game this server runs (which type each game takes: docs/games.md#the-server-at-vyhub)`,
  };
}
