/**
 * The environment of the programs hub-agent starts (the wrapped game server, hooks): what a program normally
 * needs to run, never hub-agent's own settings. HUB_* variables carry the API key and the RCON password, and a
 * wrapped server that prints its environment would put them on the console; anything else a child needs is given
 * explicitly (`[game.wrapper.env]`).
 */
const PASSED = new Set(["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR"]);
/** Locale (LC_ALL, LC_CTYPE, …) and, on Windows, what processes need to start at all. */
const PASSED_PREFIX = /^LC_[A-Z_]+$/;
const WINDOWS = new Set(["SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERPROFILE"]);

/** The account a child runs as when it is not hub-agent's own (`game.wrapper.user`). */
export interface ChildUser {
  name: string;
  home: string;
  shell: string;
}

/**
 * The child's environment: the passed variables of `parent`, then `user`'s own HOME, USER, LOGNAME and SHELL when
 * it runs as another account (without hub-agent's TMPDIR, which may be a directory only hub-agent can write),
 * then `extra`, which wins.
 */
export function childEnv(
  extra: Readonly<Record<string, string>> = {},
  parent: Readonly<Record<string, string | undefined>> = process.env,
  user?: ChildUser,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (PASSED.has(name) || PASSED_PREFIX.test(name) || WINDOWS.has(name.toUpperCase())) env[name] = value;
  }
  if (user) {
    delete env.TMPDIR;
    Object.assign(env, { HOME: user.home, USER: user.name, LOGNAME: user.name, SHELL: user.shell });
  }
  return { ...env, ...extra };
}
