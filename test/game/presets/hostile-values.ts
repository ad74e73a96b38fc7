/** The hostile nicks, reasons and messages every console escaping is tested with (docs/game-consoles.md §4). */
import type { Preset } from "../../../lib/game/presets/types.ts";
import { recordingBridge } from "./recording.ts";

export const HOSTILE: readonly string[] = [
  "a;quit",
  "a; quit",
  '";quit;"',
  "a\nquit",
  "a\rquit",
  "a\r\nquit",
  '"',
  "'",
  'a"b"c',
  "%s%s%n%x",
  "$(reboot)",
  "${HOME}",
  "\\",
  "trailing\\",
  '\\";quit;//',
  "//comment",
  "/* x */ quit",
  "Ünïcødé 日本語 🎮",
  "x".repeat(5000),
  "🎮".repeat(500),
  "",
  "   ",
  "\t\ttab",
  "nul\0byte",
  "line\u2028separator",
  "next\u0085line",
  "\u001b[31mred\u001b[0m",
  "@a @e[type=creeper]",
  "§cred§r",
  "^1red^7",
  "{text}",
  '{"text":"x"}',
  "\ud800lone surrogate",
  "quit",
  '" ; rcon_password x ; "',
  'a\\"; quit; echo "',
  "\u202equit",
  "<color=red>x</color>",
  "👩‍👩‍👧 family",
  "`backtick`",
  "vertical\u000btab",
  "exec autoexec.cfg",
];

/**
 * The commands a preset renders for a hostile value, which the transports must carry as they are: a broadcast of
 * it (split at line breaks), and a reward saying the escaped value.
 */
export async function hostileCommands(preset: Preset, value: string): Promise<string[]> {
  const { bridge, transport } = recordingBridge(preset);
  if (preset.commands.broadcast !== undefined) await bridge.message(null, value);
  await bridge.exec(`say ${bridge.escape(value)}`);
  return transport.commands;
}
