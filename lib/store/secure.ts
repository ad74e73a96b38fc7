/**
 * A store only its owner can use. Whatever is in the storage directory is acted on with the agent's rights: a ban
 * entry another local user could write there would be sent to VyHub as the console's (`creator=console`), a ban list
 * they planted in the cache would kick players. So, like ssh with a loose key, the directory is checked every time a
 * store is opened (one stat):
 *
 * - owned by another user and writable by us: refused (their store is theirs; the agent does not write into it or
 *   trust it); one we cannot write in fails at its first write, with that line (EACCES);
 * - owned by us, open to the group or the world for writing: closed (0700) first, each folder before it is listed,
 *   so that nothing more can be planted while it is looked through; a file or folder another user owns may have
 *   been planted, so the store is refused (its mode put back as found, so that it is checked again until the
 *   operator has looked); otherwise files are corrected to 0600;
 * - owned by us, only readable by others: corrected to 0700 (nobody else could have written in it);
 * - then what the store follows inside it (its top-level entries and their children: queue/<kind>, cache/<name>, …,
 *   a few dozen lstats whatever the queues hold): a link, or anything another user owns or a folder others may
 *   write in, is refused, since another user may reach it from elsewhere (a shared disk, a bind mount). Deeper
 *   files are checked as they are read (records.ts: one another user owns is refused).
 *
 * Folders the store creates are 0700 and files 0600 (the driver, the locks). A refusal is a StoreWriteError (exit 8,
 * like the other storage errors) whose one line names the path and the fix.
 */
import { constants } from "node:fs";
import { access, chmod, lstat, readdir, readFile, readlink, stat } from "../fsio.ts";
import { join } from "node:path";
import { StoreWriteError } from "./errors.ts";

/** Group and world permission bits. */
const OTHERS = 0o077;
/** Group- and world-writable. */
const OTHERS_WRITE = 0o022;

/** The store cannot be used safely: another user owns it or may have written in it. */
export class StoreUnsafeError extends StoreWriteError {
  override name = "StoreUnsafeError";
  constructor(path: string, dir: string, line: string) {
    super("EPERM", path, dir);
    this.message = line;
  }
}

export interface Secured {
  /** The directory's mode before it was corrected (e.g. 0o777); undefined when it needed nothing. */
  corrected?: number;
  /** Others can read the store and it could not be corrected (a read-only disk): used, with this warning. */
  warning?: string;
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

const writable = (dir: string) =>
  access(dir, constants.W_OK | constants.X_OK).then(
    () => true,
    () => false,
  );

/** `name (uid N)` from /etc/passwd, or `uid N` when the name is unknown. */
async function userName(uid: number): Promise<string> {
  const passwd = await readFile("/etc/passwd", "utf8").catch(() => "");
  const name = passwd
    .split("\n")
    .map((l) => l.split(":"))
    .find((f) => f[2] === String(uid))?.[0];
  return name ? `user ${name} (uid ${uid})` : `uid ${uid}`;
}

/**
 * The first path under `dir` (depth first) not owned by `uid`, and every file to correct. Each folder of ours is
 * closed (0700) before it is listed: nothing can be planted in it after it was looked at, also not through a folder
 * another process had already opened.
 */
async function inspect(
  dir: string,
  uid: number,
  out: {
    foreign?: { path: string; uid: number };
    fix: { path: string; mode: number }[];
    listed?: (folder: string) => void;
  },
): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return; // gone meanwhile, or not a folder: nothing under it to plant
  }
  out.listed?.(dir);
  for (const name of names) {
    if (out.foreign) return;
    const path = join(dir, name);
    const info = await lstat(path).catch(() => undefined);
    if (!info) continue;
    if (info.uid !== uid) {
      out.foreign = { path, uid: info.uid };
      return;
    }
    if (info.isDirectory()) {
      if ((info.mode & 0o777) !== 0o700) await chmod(path, 0o700);
      await inspect(path, uid, out);
    } else if (info.isFile() && (info.mode & OTHERS) !== 0) out.fix.push({ path, mode: 0o600 });
  }
}

/**
 * Checks the storage directory (which exists) and corrects it when it is ours; throws StoreUnsafeError when another
 * user owns it or may have written in it. Nothing to check where there are no user ids (Windows).
 */
export async function secureStore(
  dir: string,
  /** Told after each folder is listed (tests: another user writes there then). */
  o: { listed?: (folder: string) => void } = {},
): Promise<Secured> {
  const uid = process.getuid?.();
  if (uid === undefined) return {};
  // stat, not lstat: a storage directory may be a link to another disk; what counts is the folder written to.
  const info = await stat(dir).catch(() => undefined);
  if (!info) return {};
  const mode = info.mode & 0o777;
  if (info.uid !== uid) {
    // One we cannot write in is not ours to use either way: its first write says so (EACCES, with the fix).
    if (!(await writable(dir))) return {};
    const [owner, me] = await Promise.all([userName(info.uid), userName(uid)]);
    throw new StoreUnsafeError(
      dir,
      dir,
      `the store ${dir} belongs to ${owner}, not to ${me} running hub-agent: it is not used, since its owner could ` +
        `put bans in it; run hub-agent as its owner, or give it to this user (\`chown -R ${uid} ${dir}\`)`,
    );
  }
  if ((mode & OTHERS) === 0) {
    await checkInside(dir, uid);
    return {};
  }
  const cannot = (e: unknown) =>
    `the store ${dir} is open to other users (mode ${octal(mode)}) and could not be corrected ` +
    `(${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): \`chmod -R go-rwx ${dir}\``;
  const plan: Parameters<typeof inspect>[2] = { fix: [], ...o };
  try {
    // Closed first, then looked through: what others planted is in it by now, and nothing more can come.
    await chmod(dir, 0o700);
    // Only a store others could write in can hold what they planted; one they could only read is now closed whole.
    if (mode & OTHERS_WRITE) await inspect(dir, uid, plan);
  } catch (e) {
    await chmod(dir, mode).catch(() => {});
    if (mode & OTHERS_WRITE) throw new StoreUnsafeError(dir, dir, cannot(e));
    return { warning: cannot(e) };
  }
  if (plan.foreign) {
    // Opened again as found, so that it is checked again (and refused) until the operator has looked.
    await chmod(dir, mode).catch(() => {});
    const owner = await userName(plan.foreign.uid);
    throw new StoreUnsafeError(
      plan.foreign.path,
      dir,
      `the store ${dir} is open to other users (mode ${octal(mode)}) and holds ${plan.foreign.path}, which ` +
        `${owner} owns and may have planted: it is not used until you have looked; remove what is not hub-agent's ` +
        `(\`find ${dir} ! -user ${uid}\` lists it), then \`chmod 700 ${dir}\``,
    );
  }
  try {
    for (const f of plan.fix) await chmod(f.path, f.mode);
  } catch (e) {
    // The folders are closed: others could read these files until now, and can no longer reach them.
    return { corrected: mode, warning: cannot(e) };
  }
  await checkInside(dir, uid); // a link is not looked through above
  return { corrected: mode };
}

/**
 * Refuses what the store would follow out of its 0700 directory: a link, or an entry another user owns or a folder
 * others may write in, among its top-level entries and their children (two levels: the store's layout, not its
 * entries, so a long queue costs nothing here).
 */
async function checkInside(dir: string, uid: number, folder = dir, depth = 2): Promise<void> {
  const names = await readdir(folder).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      const path = join(folder, name);
      const info = await lstat(path).catch(() => undefined);
      if (!info) return; // removed meanwhile
      const why = info.isSymbolicLink()
        ? `, a link to ${await readlink(path).catch(() => "?")}`
        : info.uid !== uid
          ? `, which ${await userName(info.uid)} owns`
          : info.isDirectory() && info.mode & OTHERS_WRITE
            ? `, which other users may write in (mode ${octal(info.mode)})`
            : undefined;
      if (why) throw new StoreUnsafeError(path, dir, unsafeInside(dir, path, why, info.isSymbolicLink(), uid));
      if (info.isDirectory() && depth > 1) await checkInside(dir, uid, path, depth - 1);
    }),
  );
}

/** The refusal of a record file another user owns, found as it is read (records.ts). */
export async function foreignFile(dir: string, path: string, owner: number): Promise<StoreUnsafeError> {
  const why = `, which ${await userName(owner)} owns`;
  return new StoreUnsafeError(path, dir, unsafeInside(dir, path, why, false, process.getuid?.() ?? 0));
}

function unsafeInside(dir: string, path: string, why: string, link: boolean, uid: number): string {
  const fix = link
    ? `replace it with a folder of its own (\`rm ${path}\`); to keep the store on another disk, set storage.dir there`
    : `remove what is not hub-agent's (\`find ${path} ! -user ${uid}\` lists it), then \`chown -R ${uid} ${path}\` and \`chmod -R go-rwx ${path}\``;
  return `the store ${dir} holds ${path}${why}: it is not used, since another user could put bans in it; ${fix}`;
}
