/**
 * The game section's checks across keys, which only the game can make: what a \`game.bridge\` kind needs (its own
 * validate), whether the preset speaks that console, the generic preset's player list, the preset's overrides
 * resolved (and, for \`run\` and \`doctor\`, the operator's patterns timed on hostile lines). The configuration runs
 * them through its GameVocabulary (lib/game/vocabulary.ts), after its schema accepted the values.
 */
import { bridgeKind } from "./kinds/index.ts";
import {
  PRESET_NAMES,
  PRESETS,
  PresetError,
  type PresetOverrides,
  overridePatterns,
  resolvePreset,
} from "./presets/index.ts";

/** The configuration as written (lib/config's SectionView, by shape: the game never imports the configuration). */
export interface SectionView {
  get(path: string): unknown;
  where(path: string): string;
  missing(path: string): string;
}

/** The game keys that depend on each other: what a bridge needs, and the preset's overrides. */
export async function checkGameSection(section: SectionView, timed: boolean): Promise<string[]> {
  const { get, where, missing } = section;
  const bridge = (get("game.bridge") as string | undefined)?.trim() ?? "sim";
  if (bridge === "sim") return [];
  const problems: string[] = [];
  const needs = `game.bridge = "${bridge}" (${where("game.bridge")}) needs`;
  const presetName = get("game.preset") as string | undefined;
  if (presetName === undefined) {
    problems.push(`${missing("game.preset")}: ${needs} to know the game (${PRESET_NAMES.join(", ")})`);
  }
  const kind = bridgeKind(bridge);
  if (!kind) return problems; // the schema named the bridges it knows
  problems.push(...(kind.validate?.(section) ?? []));
  if (presetName === undefined || !(PRESET_NAMES as readonly string[]).includes(presetName)) return problems;
  const preset = PRESETS[presetName as keyof typeof PRESETS];
  if (kind.console && !preset.consoles[kind.name]) {
    const spoken = [...Object.keys(preset.consoles), "wrapper"].map((k) => `"${k}"`).join(" or ");
    problems.push(`${needs} ${kind.title}, which ${presetName} doesn't speak: use game.bridge = ${spoken}`);
  }
  if (presetName === "generic" && !kind.listsPlayers) {
    for (const [key, example] of [
      ["list_command", '"clients"'],
      ["list_row", String.raw`'^ *(?<slot>\d+) +(?<name>.+)$'`],
    ] as const) {
      if (get(`game.overrides.${key}`) === undefined) {
        problems.push(
          `${missing(`game.overrides.${key}`)}: game.preset = "generic" (${where("game.preset")}) needs the console's player list (e.g. ${key} = ${example}; see docs/games/your-own-game.md)`,
        );
      }
    }
  }
  try {
    const overrides = (get("game.overrides") ?? {}) as PresetOverrides;
    const resolved = resolvePreset(presetName, overrides);
    if (timed) problems.push(...(await slowPatterns(overrides, where)));
    if (kind.console && preset.consoles[kind.name]?.port === 0 && get("game.rcon.port") === undefined) {
      problems.push(
        `${missing("game.rcon.port")}: ${needs} the port of ${kind.title} (the ${presetName} preset has no default)`,
      );
    }
    if (kind.name === "wrapper" && !resolved.echo && !resolved.list.until && !resolved.replyQuietMs) {
      problems.push(
        `${needs} to know where a reply ends, and the ${presetName} preset's console has no echo: set game.overrides.echo (e.g. "echo {marker}"), game.overrides.list_end (the list's last line) or game.overrides.reply_quiet (seconds of silence)`,
      );
    }
  } catch (e) {
    if (!(e instanceof PresetError)) throw e;
    const key = /game\.overrides\.[\w.]+/.exec(e.message)?.[0];
    problems.push(key ? `${e.message} (${where(key)})` : e.message);
  }
  return problems;
}

/** The operator's patterns that take longer than linear time on the hostile lines built for them (run, doctor). */
async function slowPatterns(overrides: PresetOverrides, where: (path: string) => string): Promise<string[]> {
  const { tooSlow } = await import("./sources/pattern-timing.ts");
  return overridePatterns(overrides).flatMap(([key, re]) => {
    const why = tooSlow(re);
    return why ? [`${key} is refused: ${why} (${where(key)})`] : [];
  });
}
