/**
 * Player ids as games print them, normalised to what the service expects (docs/service-api.md §2.3):
 * SteamID64 as a 17-digit decimal string, Minecraft UUIDs lower-case with dashes.
 */

/** SteamID64 of individual accounts in the public universe: 0x0110000100000000 + account id. */
const STEAM64_BASE = 76561197960265728n;
const MAX_ACCOUNT = 0xffffffffn;

/** `STEAM_X:Y:Z` (X is the universe, 0 in old engines and 1 in newer ones; any case, as operators type it) → SteamID64. */
export function steam2To64(steam2: string): string | undefined {
  const m = /^STEAM_[0-5]:([01]):(\d{1,10})$/i.exec(steam2.trim());
  if (!m) return undefined;
  const account = BigInt(m[2]!) * 2n + BigInt(m[1]!);
  return account <= MAX_ACCOUNT ? (STEAM64_BASE + account).toString() : undefined;
}

/** `[U:1:N]` (also without brackets) → SteamID64. */
export function steam3To64(steam3: string): string | undefined {
  const m = /^\[?U:1:(\d{1,10})\]?$/i.exec(steam3.trim());
  if (!m) return undefined;
  const account = BigInt(m[1]!);
  return account <= MAX_ACCOUNT ? (STEAM64_BASE + account).toString() : undefined;
}

/** A SteamID64 of an individual account, or undefined. */
export function steam64(value: string): string | undefined {
  const v = value.trim();
  if (!/^\d{17}$/.test(v)) return undefined;
  const account = BigInt(v) - STEAM64_BASE;
  return account > 0n && account <= MAX_ACCOUNT ? v : undefined;
}

/** Any Steam id form (64, STEAM_X:Y:Z, [U:1:N]) → SteamID64; undefined for bots, `STEAM_ID_PENDING`, LAN ids. */
export function anySteamTo64(value: string): string | undefined {
  return steam64(value) ?? steam2To64(value) ?? steam3To64(value);
}

/** SteamID64 → `STEAM_0:Y:Z` (the form ULX and srcds' `status` use in GMod). */
export function steam64To2(id64: string): string {
  const account = BigInt(id64) - STEAM64_BASE;
  return `STEAM_0:${account % 2n}:${account / 2n}`;
}

/** SteamID64 → `[U:1:N]` (the form CS2 logs use). */
export function steam64To3(id64: string): string {
  return `[U:1:${BigInt(id64) - STEAM64_BASE}]`;
}

/** The `{steam64}`, `{steam2}` and `{steam3}` placeholders of a SteamID64. */
export function steamValues(id64: string): { steam64: string; steam2: string; steam3: string } {
  return { steam64: id64, steam2: steam64To2(id64), steam3: steam64To3(id64) };
}

/** A Minecraft UUID with or without dashes → lower case with dashes. */
export function minecraftUuid(value: string): string | undefined {
  const hex = value.trim().toLowerCase().replace(/-/g, "");
  if (!/^[0-9a-f]{32}$/.test(hex)) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Quake 3 colour codes (`^1`, `^7`, …) removed, as the player sees the name. */
export function stripQuakeColours(text: string): string {
  // ioq3's Q_IsColorString: a caret followed by a letter or digit.
  return text.replace(/\^[0-9A-Za-z]/g, "");
}

/** Minecraft `§` formatting codes removed. */
export function stripMinecraftColours(text: string): string {
  return text.replace(/§[0-9a-fk-orx]/gi, "");
}

/** DarkPlaces colour codes removed (`^0`–`^9`, `^xRGB`); `^^` is a caret as typed. */
export function stripDarkplacesColours(text: string): string {
  return text.replace(/\^(?:x[0-9A-Fa-f]{3}|[0-9]|\^)/g, (code) => (code === "^^" ? "^" : ""));
}
