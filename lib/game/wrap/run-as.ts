/**
 * `game.wrapper.user` and `group`: the account the wrapped server runs as when hub-agent runs as root (servers
 * such as freeciv-server refuse to run as root). Looked up in the system's user database at every start, through
 * `getent` (local files, LDAP, systemd's users), or /etc/passwd and /etc/group where `getent` is not installed.
 */
import { execFile } from "node:child_process";
import { childEnv } from "../../child-env.ts";
import { readFile } from "../../fsio.ts";
import { WrapperSetupError } from "./setup-error.ts";

/** Who the server runs as: ids for spawn(), the rest for its environment (lib/child-env.ts). */
export interface RunAs {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
}

/**
 * The account `user` (a name or a uid) with `group` (a name or a gid; default: the user's own group). Rejects with
 * one line naming the key and the fix when either does not exist, or when hub-agent is not root and would have to
 * become another user: without root, a process can't change its user.
 */
export async function resolveRunAs(user: string, group?: string): Promise<RunAs> {
  if (process.platform === "win32" || !process.getuid || !process.getgid) {
    throw new WrapperSetupError(`game.wrapper.user = "${user}": Windows has no user switch`, "remove the key");
  }
  const pw = await lookup("passwd", user);
  if (!pw) {
    throw new WrapperSetupError(
      `game.wrapper.user = "${user}" is not a user on this machine`,
      `create it (useradd --system ${user}) or name an existing one`,
    );
  }
  const [name = user, , uid, gid, , home = "/", shell = "/bin/sh"] = pw;
  let groupId = Number(gid);
  if (group !== undefined) {
    const gr = await lookup("group", group);
    if (!gr) {
      throw new WrapperSetupError(
        `game.wrapper.group = "${group}" is not a group on this machine`,
        `create it (groupadd --system ${group}), name an existing one, or remove the key to use ${name}'s own group`,
      );
    }
    groupId = Number(gr[2]);
  }
  const runAs = { name, uid: Number(uid), gid: groupId, home, shell };
  const [myUid, myGid] = [process.getuid(), process.getgid()];
  if (myUid !== 0 && (runAs.uid !== myUid || runAs.gid !== myGid)) {
    throw new WrapperSetupError(
      `game.wrapper.user = "${user}": hub-agent runs as uid ${myUid}, not root, and can't start the server as ${name} (uid ${runAs.uid}, gid ${runAs.gid})`,
      `run hub-agent as root (docs/games.md, "Wrapping the server"), or as ${name} itself, or remove game.wrapper.user`,
    );
  }
  return runAs;
}

/** The entry of a name or number in `passwd` or `group`, split at `:`; undefined when there is none. */
async function lookup(db: "passwd" | "group", key: string): Promise<string[] | undefined> {
  // Not an option of getent, nor a ":" that would match the wrong field of the files' fallback.
  if (!/^[\w.$-]+$/.test(key) || key.startsWith("-")) return undefined;
  const line = await getent(db, key).catch(async (e: NodeJS.ErrnoException) => {
    if (e.code !== "ENOENT") throw e;
    // No getent (a minimal container): the local files.
    const numeric = /^\d+$/.test(key);
    const lines = (await readFile(`/etc/${db}`, "utf8")).split("\n");
    return lines.find((l) => {
      const f = l.split(":");
      return numeric ? f[2] === key : f[0] === key;
    });
  });
  const fields = line?.trim().split(":");
  return fields && fields.length >= (db === "passwd" ? 7 : 3) && /^\d+$/.test(fields[2] ?? "") ? fields : undefined;
}

/** `getent <db> <key>`: its one line, or undefined when there is no such entry (exit code 2). */
function getent(db: string, key: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    execFile("getent", [db, key], { timeout: 10_000, maxBuffer: 64 * 1024, env: childEnv() }, (error, stdout) => {
      if (!error) return resolve(stdout.split("\n")[0]);
      if (typeof error.code === "number") return resolve(undefined); // 2: not found
      reject(error);
    });
  });
}
