/**
 * The game presets and the operator's overrides of them (`[game.overrides]`): data fields only, validated here so
 * a bad regex or template is one clear line at startup, not a silent miss later.
 */
import type { ColourMode } from "../bridge.ts";
import { cs2 } from "./cs2.ts";
import { ddnet } from "./ddnet.ts";
import { ESCAPE_MODE_NAMES, ESCAPE_MODES, type EscapeMode } from "./escape.ts";
import { generic } from "./generic.ts";
import { gmod } from "./gmod.ts";
import { minecraft } from "./minecraft.ts";
import { openarena } from "./openarena.ts";
import { rust } from "./rust.ts";
import { teeworlds } from "./teeworlds.ts";
import { xonotic } from "./xonotic.ts";
import type { Escaping } from "./quoting.ts";
import { placeholdersOf, render, SAMPLE_VALUES, TemplateError } from "./template.ts";
import { cutLine } from "../sources/cut.ts";
import { ambiguity } from "../sources/pattern-check.ts";
import {
  COMMAND_KINDS,
  type CommandKind,
  LINE_KINDS,
  type LineKind,
  type ListedPlayer,
  type PlayerList,
  type Preset,
} from "./types.ts";

export * from "./types.ts";

/** Every game, by the name `game.preset` takes: PRESET_NAMES, the schema and every message list these keys. */
export const PRESETS = {
  minecraft,
  gmod,
  rust,
  cs2,
  openarena,
  teeworlds,
  ddnet,
  xonotic,
  generic,
} as const satisfies Record<string, Preset>;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as readonly PresetName[];

/** `[game.overrides]` as the config schema delivers it (snake_case, all optional). */
export interface PresetOverrides {
  user_type?: string;
  command_prefix?: string;
  multi_group?: boolean;
  colours?: ColourMode;
  max_players?: number;
  list_command?: string;
  /** A player-list row: named groups `name` and/or `id`, optionally `slot`; every matching line is a player. */
  list_row?: string;
  /** The list reply's last line (a wrapped console without `echo`). */
  list_end?: string;
  /** The line after which `list_end` counts: a list framed by the same line above and below its rows. */
  list_start?: string;
  /** The wrapped console's echo command, `{marker}` where the marker goes; "" when it has none. */
  echo?: string;
  /** Seconds of silence that end a reply on a wrapped console without echo. */
  reply_quiet?: number;
  /** An EscapeMode; a string as the configuration delivers it, checked by resolvePreset. */
  escape?: string;
  /** By LineKind (checked by resolvePreset); "" removes the preset's pattern. */
  lines?: Readonly<Record<string, string | undefined>>;
  /** By CommandKind (checked by resolvePreset); "" removes a command (the game can't do it). */
  commands?: Readonly<Record<string, string | undefined>>;
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

/**
 * The named preset with the operator's overrides applied; throws a PresetError naming the key and the fix. Every
 * pattern is checked for the shapes that take exponential time (their timing: overridePatterns).
 */
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
    else lines[kind] = [compileLine(kind, compile(`game.overrides.lines.${kind}`, source), source)];
  }
  const escape = o.escape as EscapeMode | undefined;
  if (escape !== undefined && !ESCAPE_MODE_NAMES.includes(escape)) {
    throw new PresetError(
      `game.overrides.escape = "${o.escape}" is not an escaping: use ${ESCAPE_MODE_NAMES.join(", ")}`,
    );
  }
  const escaping: Escaping = escape ? ESCAPE_MODES[escape] : base;
  const commands = { ...base.commands };
  for (const [kind, template] of Object.entries(o.commands ?? {}) as [CommandKind, string][]) {
    if (!COMMAND_KINDS.includes(kind)) throw new PresetError(`game.overrides.commands.${kind} is not a command`);
    if (template === "") delete commands[kind];
    else commands[kind] = checkTemplate(kind, template, escaping);
  }
  const prefix = o.command_prefix ?? base.commandPrefix;
  if (/\s/.test(prefix)) {
    throw new PresetError(`game.overrides.command_prefix = ${JSON.stringify(prefix)} must not contain spaces`);
  }
  const list = { ...base.list };
  if (o.list_command) list.command = o.list_command;
  if (o.list_row !== undefined)
    list.parse = rowParser(compileRow(compile("game.overrides.list_row", o.list_row), o.list_row), base);
  if (o.list_end !== undefined) {
    if (o.list_end === "") delete list.until;
    else list.until = compile("game.overrides.list_end", o.list_end);
  }
  if (o.list_start !== undefined) {
    if (o.list_start === "") delete list.start;
    else list.start = compile("game.overrides.list_start", o.list_start);
  }
  if (list.start && !list.until) {
    throw new PresetError(
      "game.overrides.list_start needs game.overrides.list_end: the list's last line, which counts only after the start line",
    );
  }
  const echo = o.echo === undefined ? base.echo : echoOf(o.echo);
  const { echo: _echo, replyQuietMs: _quiet, ...rest } = base;
  const quietMs = o.reply_quiet !== undefined ? o.reply_quiet * 1000 : base.replyQuietMs;
  return {
    ...rest,
    ...(echo ? { echo } : {}),
    ...(quietMs ? { replyQuietMs: quietMs } : {}),
    escape: escaping.escape,
    quoting: escaping.quoting,
    userType: o.user_type ?? base.userType,
    commandPrefix: prefix,
    multiGroup: o.multi_group ?? base.multiGroup,
    colours: o.colours ?? base.colours,
    ...(o.max_players !== undefined ? { maxPlayers: o.max_players } : {}),
    list,
    lines,
    commands,
  };
}

/** A pattern of the operator's: valid, and without a shape that takes exponential time (docs/game-consoles.md §8). */
function compile(key: string, source: string): RegExp {
  let re: RegExp;
  try {
    re = new RegExp(source);
  } catch (e) {
    throw new PresetError(`${key} is not a valid regular expression: ${(e as Error).message}`);
  }
  const why = ambiguity(re);
  if (why) {
    throw new PresetError(
      `${key} is refused: ${why}, and a player's name or chat line can make that take seconds; write one repetition per part, with characters the next part can't start with (e.g. [^:]*: or \\S+ instead of (?:\\w+ ?)+)`,
    );
  }
  return re;
}

/** The operator's patterns, by key (valid: resolvePreset accepted them), for `run` and `doctor` to time. */
export function overridePatterns(o: PresetOverrides): [key: string, re: RegExp][] {
  const out: [string, RegExp][] = [];
  for (const key of ["list_row", "list_start", "list_end"] as const) {
    const source = o[key];
    if (source) out.push([`game.overrides.${key}`, new RegExp(source)]);
  }
  for (const [kind, source] of Object.entries(o.lines ?? {})) {
    if (source) out.push([`game.overrides.lines.${kind}`, new RegExp(source)]);
  }
  return out;
}

function compileLine(kind: LineKind, re: RegExp, source: string): RegExp {
  const needs = NEEDS[kind];
  if (needs && !needs.some((g) => source.includes(`(?<${g}>`))) {
    throw new PresetError(
      `game.overrides.lines.${kind} needs a named group ${needs.map((g) => `(?<${g}>…)`).join(" or ")}`,
    );
  }
  return re;
}

function checkTemplate(kind: CommandKind, template: string, escaping: Escaping): string {
  let used: string[];
  try {
    used = placeholdersOf(template);
    // Rendered with sample values: a value where the console's quoting lets none go is refused now, not per player.
    render(template, SAMPLE_VALUES, escaping);
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

const MARKER = "{marker}";

/** `game.overrides.echo`: a one-line template printing the marker; "" is a console without echo. */
function echoOf(template: string): ((marker: string) => string) | undefined {
  if (template === "") return undefined;
  if (!template.includes(MARKER)) {
    throw new PresetError(
      `game.overrides.echo = ${JSON.stringify(template)} must contain {marker}, e.g. "echo {marker}"`,
    );
  }
  if (/[\r\n]/.test(template)) throw new PresetError("game.overrides.echo must be one line");
  return (marker) => template.replaceAll(MARKER, marker);
}

function compileRow(re: RegExp, source: string): RegExp {
  if (!source.includes("(?<name>") && !source.includes("(?<id>")) {
    throw new PresetError(
      "game.overrides.list_row needs a named group (?<name>…) or (?<id>…), and (?<slot>…) if the kick command uses {slot}",
    );
  }
  return re;
}

/**
 * A player list read row by row with the operator's pattern; names and ids are cleaned by the preset. The override
 * replaces the rows only: what the preset's own parser reads from the same reply (the map, the player limit, a
 * row's score and ping) is kept.
 */
function rowParser(row: RegExp, base: Preset): (reply: string) => PlayerList {
  return (reply) => {
    const { players: parsed, ...rest } = base.list.parse(reply);
    const players: ListedPlayer[] = [];
    for (const line of reply.split(/\r?\n/)) {
      const g = row.exec(cutLine(line))?.groups;
      if (!g) continue;
      const name = base.cleanName(g.name ?? g.id ?? "");
      const id =
        g.id !== undefined ? base.normaliseId(g.id) : base.identity === "name" ? base.normaliseId(name) : undefined;
      if (!name && !id) continue;
      const slot = g.slot?.trim();
      const same = parsed.find((p) => (slot && p.slot !== undefined ? p.slot === slot : p.name === name));
      players.push({
        ...(id ? { id } : {}),
        name: name || (id as string),
        ...(slot ? { slot } : {}),
        ...(same?.extra ? { extra: same.extra } : {}),
      });
    }
    return { ...rest, players };
  };
}
