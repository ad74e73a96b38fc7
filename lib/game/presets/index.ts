/**
 * The game presets and the operator's overrides of them (`[game.overrides]`): data fields only, validated here so
 * a bad regex or template is one clear line at startup, not a silent miss later.
 */
import type { ColourMode } from "../bridge.ts";
import { cs2 } from "./cs2.ts";
import { gmod } from "./gmod.ts";
import { minecraft } from "./minecraft.ts";
import { openarena } from "./openarena.ts";
import { rust } from "./rust.ts";
import { teeworlds } from "./teeworlds.ts";
import { xonotic } from "./xonotic.ts";
import { placeholdersOf, TemplateError } from "./template.ts";
import {
  COMMAND_KINDS,
  type CommandKind,
  LINE_KINDS,
  type LineKind,
  PRESET_NAMES,
  type Preset,
  type PresetName,
} from "./types.ts";

export * from "./types.ts";

export const PRESETS: Record<PresetName, Preset> = { minecraft, gmod, rust, cs2, openarena, teeworlds, xonotic };

/** `[game.overrides]` as the config schema delivers it (snake_case, all optional). */
export interface PresetOverrides {
  user_type?: string;
  command_prefix?: string;
  multi_group?: boolean;
  colours?: ColourMode;
  max_players?: number;
  list_command?: string;
  lines?: Partial<Record<LineKind, string>>;
  /** "" removes a command (the game can't do it). */
  commands?: Partial<Record<CommandKind, string>>;
}

/** Which named groups a line kind needs at least one of. */
const NEEDS: Partial<Record<LineKind, string[]>> = {
  identity: ["id", "name", "slot"],
  connect: ["id", "name", "slot"],
  disconnect: ["id", "name", "slot"],
  spawn: ["id", "name", "slot"],
  death: ["id", "name", "slot"],
  chat: ["text"],
  group_add: ["group"],
  group_remove: ["group"],
};

/** Templates must use these placeholders (a kick that names nobody would run against no one). */
const TEMPLATE_NEEDS: Partial<Record<CommandKind, string[]>> = {
  message: ["text"],
  broadcast: ["text"],
  group_add: ["group"],
  group_add_temp: ["group"],
};

export class PresetError extends Error {
  override name = "PresetError";
}

export function isPresetName(name: string): name is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(name);
}

/** The named preset with the operator's overrides applied; throws a PresetError naming the key and the fix. */
export function resolvePreset(name: string, overrides: PresetOverrides = {}): Preset {
  if (!isPresetName(name)) {
    throw new PresetError(`game.preset = "${name}" is not a preset: use one of ${PRESET_NAMES.join(", ")}`);
  }
  const base = PRESETS[name];
  const o = overrides;
  const lines = { ...base.lines };
  for (const [kind, source] of Object.entries(o.lines ?? {}) as [LineKind, string][]) {
    if (!LINE_KINDS.includes(kind)) throw new PresetError(`game.overrides.lines.${kind} is not a line kind`);
    if (source === "") delete lines[kind];
    else lines[kind] = [compileLine(kind, source)];
  }
  const commands = { ...base.commands };
  for (const [kind, template] of Object.entries(o.commands ?? {}) as [CommandKind, string][]) {
    if (!COMMAND_KINDS.includes(kind)) throw new PresetError(`game.overrides.commands.${kind} is not a command`);
    if (template === "") delete commands[kind];
    else commands[kind] = checkTemplate(kind, template);
  }
  const prefix = o.command_prefix ?? base.commandPrefix;
  if (/\s/.test(prefix)) {
    throw new PresetError(`game.overrides.command_prefix = ${JSON.stringify(prefix)} must not contain spaces`);
  }
  return {
    ...base,
    userType: o.user_type ?? base.userType,
    commandPrefix: prefix,
    multiGroup: o.multi_group ?? base.multiGroup,
    colours: o.colours ?? base.colours,
    ...(o.max_players !== undefined ? { maxPlayers: o.max_players } : {}),
    list: o.list_command ? { ...base.list, command: o.list_command } : base.list,
    lines,
    commands,
  };
}

function compileLine(kind: LineKind, source: string): RegExp {
  let re: RegExp;
  try {
    re = new RegExp(source);
  } catch (e) {
    throw new PresetError(`game.overrides.lines.${kind} is not a valid regular expression: ${(e as Error).message}`);
  }
  const needs = NEEDS[kind];
  if (needs && !needs.some((g) => source.includes(`(?<${g}>`))) {
    throw new PresetError(
      `game.overrides.lines.${kind} needs a named group ${needs.map((g) => `(?<${g}>…)`).join(" or ")}`,
    );
  }
  return re;
}

function checkTemplate(kind: CommandKind, template: string): string {
  let used: string[];
  try {
    used = placeholdersOf(template);
  } catch (e) {
    if (e instanceof TemplateError) throw new PresetError(`game.overrides.commands.${kind}: ${e.message}`);
    throw e;
  }
  const needs = TEMPLATE_NEEDS[kind];
  if (needs && !needs.every((p) => used.includes(p))) {
    throw new PresetError(`game.overrides.commands.${kind} must use ${needs.map((p) => `{${p}}`).join(" and ")}`);
  }
  if (/[\r\n]/.test(template)) throw new PresetError(`game.overrides.commands.${kind} must be one line`);
  return template;
}
